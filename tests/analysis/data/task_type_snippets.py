"""Hand-written, labelled editor contexts for the task-type classifier.

Each entry is what the editor would send around the cursor: a ``file_type`` (VS Code
language id, a file extension, or ``None`` when the client did not send one), the code
before the cursor (``prefix``) and after it (``suffix``), and the label a careful human
gives it. Label definitions are in ``analysis/labels/task_type.py``.

The snippets were written for this test (not copied from anywhere) to look like real
work in progress: partial files, several languages, and a few hard cases on purpose
(a Python scraper, a C exercise, a GUI written in Python, a notebook with shell magics).
"""

SNIPPETS: list[dict] = [
    # ------------------------------------------------------------------ frontend
    {
        "id": "fe-react-hook-form",
        "file_type": "typescriptreact",
        "label": "frontend",
        "prefix": """import { useState } from "react";
import { Button } from "@/components/ui/button";

export default function LoginForm({ onSubmit }: { onSubmit: (email: string) => void }) {
  const [email, setEmail] = useState("");
  return (
    <form className="flex flex-col gap-2" onSubmit={(e) => { e.preventDefault(); onSubmit(email); }}>
      <input
        type="email"
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        className="rounded border px-3 py-2"
      />
      <Button type="submit" disabled={""",
        "suffix": """}>Sign in</Button>
    </form>
  );
}
""",
    },
    {
        "id": "fe-vue-sfc",
        "file_type": "vue",
        "label": "frontend",
        "prefix": """<template>
  <ul class="todo-list">
    <li v-for="item in items" :key="item.id" @click="toggle(item)">
      {{ item.title }}
    </li>
  </ul>
</template>

<script setup>
import { ref } from 'vue'
const items = ref([])
function toggle(item) {
  """,
        "suffix": """
}
</script>
""",
    },
    {
        "id": "fe-css-grid",
        "file_type": "css",
        "label": "frontend",
        "prefix": """.card-grid {
  display: grid;
  grid-template-columns: repeat(auto-fill, minmax(240px, 1fr));
  gap: 1rem;
}

.card {
  border-radius: 8px;
  box-shadow: 0 1px 3px rgba(0, 0, 0, 0.2);
  padding: 1rem;
}

.card:hover {
  """,
        "suffix": """
}
""",
    },
    {
        "id": "fe-html-landing",
        "file_type": None,
        "label": "frontend",
        "prefix": """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Bakery</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <header class="hero">
    <h1>Fresh bread every morning</h1>
    <button id="order-btn">Order now</button>
  </header>
  <script>
    document.getElementById("order-btn").addEventListener("click", () => {
      """,
        "suffix": """
    });
  </script>
</body>
</html>
""",
    },
    {
        "id": "fe-angular-component",
        "file_type": "ts",
        "label": "frontend",
        "prefix": """import { Component, Input, Output, EventEmitter } from '@angular/core';

@Component({
  selector: 'app-rating',
  templateUrl: './rating.component.html',
  styleUrls: ['./rating.component.scss'],
})
export class RatingComponent {
  @Input() value = 0;
  @Output() changed = new EventEmitter<number>();

  setValue(v: number) {
    """,
        "suffix": """
  }
}
""",
    },
    {
        "id": "fe-flutter-widget",
        "file_type": "dart",
        "label": "frontend",
        "prefix": """import 'package:flutter/material.dart';

class CounterPage extends StatefulWidget {
  const CounterPage({super.key});

  @override
  State<CounterPage> createState() => _CounterPageState();
}

class _CounterPageState extends State<CounterPage> {
  int _count = 0;

  @override
  Widget build(BuildContext context) {
    return Scaffold(
      appBar: AppBar(title: const Text('Counter')),
      body: Center(child: Text('$_count')),
      floatingActionButton: FloatingActionButton(
        onPressed: () => setState(() => """,
        "suffix": """),
        child: const Icon(Icons.add),
      ),
    );
  }
}
""",
    },
    {
        "id": "fe-tkinter-todo",
        "file_type": "python",
        "label": "frontend",
        "prefix": """import tkinter as tk
from tkinter import messagebox

root = tk.Tk()
root.title("To-do")

entry = tk.Entry(root, width=40)
entry.pack(padx=10, pady=5)

listbox = tk.Listbox(root, width=40)
listbox.pack(padx=10, pady=5)

def add_task():
    task = entry.get()
    if not task:
        messagebox.showwarning("Empty", "Type a task first")
        return
    """,
        "suffix": """

tk.Button(root, text="Add", command=add_task).pack()
root.mainloop()
""",
    },
    {
        "id": "fe-unity-player",
        "file_type": "csharp",
        "label": "frontend",
        "prefix": """using UnityEngine;

public class PlayerController : MonoBehaviour
{
    public float speed = 5f;
    public float jumpForce = 7f;
    private Rigidbody2D rb;
    private bool grounded;

    void Start()
    {
        rb = GetComponent<Rigidbody2D>();
    }

    void Update()
    {
        float move = Input.GetAxis("Horizontal");
        rb.velocity = new Vector2(move * speed, rb.velocity.y);
        if (Input.GetButtonDown("Jump") && grounded)
        {
            """,
        "suffix": """
        }
    }
}
""",
    },
    {
        "id": "fe-react-native-screen",
        "file_type": "javascriptreact",
        "label": "frontend",
        "prefix": """import React from 'react';
import { View, Text, FlatList, StyleSheet } from 'react-native';

export default function ContactsScreen({ contacts }) {
  return (
    <View style={styles.container}>
      <FlatList
        data={contacts}
        keyExtractor={(c) => c.id}
        renderItem={({ item }) => <Text style={styles.row}>{item.name}</Text>}
      />
    </View>
  );
}

const styles = StyleSheet.create({
  container: { flex: 1, padding: 16 },
  row: {""",
        "suffix": """},
});
""",
    },
    {
        "id": "fe-svelte-store",
        "file_type": "svelte",
        "label": "frontend",
        "prefix": """<script>
  import { cart } from './stores.js';
  export let product;
  function addToCart() {
    """,
        "suffix": """
  }
</script>

<div class="product">
  <h2>{product.name}</h2>
  <button on:click={addToCart}>Add to cart</button>
</div>
""",
    },
    {
        "id": "fe-pygame-loop",
        "file_type": None,
        "label": "frontend",
        "prefix": """import pygame

pygame.init()
screen = pygame.display.set_mode((800, 600))
clock = pygame.time.Clock()
player = pygame.Rect(400, 500, 50, 20)

running = True
while running:
    for event in pygame.event.get():
        if event.type == pygame.QUIT:
            running = False
    keys = pygame.key.get_pressed()
    if keys[pygame.K_LEFT]:
        """,
        "suffix": """
    screen.fill((0, 0, 0))
    pygame.draw.rect(screen, (255, 255, 255), player)
    pygame.display.flip()
    clock.tick(60)
""",
    },
    # ------------------------------------------------------------------- backend
    {
        "id": "be-express-crud",
        "file_type": "javascript",
        "label": "backend",
        "prefix": """const express = require('express');
const router = express.Router();
const Order = require('../models/Order');

router.get('/:id', async (req, res) => {
  try {
    const order = await Order.findById(req.params.id);
    if (!order) return res.status(404).json({ message: 'Not found' });
    res.json(order);
  } catch (err) {
    """,
        "suffix": """
  }
});

module.exports = router;
""",
    },
    {
        "id": "be-fastapi-items",
        "file_type": "python",
        "label": "backend",
        "prefix": """from fastapi import FastAPI, HTTPException, Depends
from sqlalchemy.orm import Session

from .database import get_db
from . import models, schemas

app = FastAPI()

@app.post("/items/", response_model=schemas.Item)
def create_item(item: schemas.ItemCreate, db: Session = Depends(get_db)):
    db_item = models.Item(**item.dict())
    db.add(db_item)
    """,
        "suffix": """
    return db_item
""",
    },
    {
        "id": "be-django-view",
        "file_type": "py",
        "label": "backend",
        "prefix": """from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render, redirect

from .forms import CommentForm
from .models import Post


@login_required
def add_comment(request, pk):
    post = get_object_or_404(Post, pk=pk)
    if request.method == "POST":
        form = CommentForm(request.POST)
        if form.is_valid():
            """,
        "suffix": """
    else:
        form = CommentForm()
    return render(request, "blog/add_comment.html", {"form": form})
""",
    },
    {
        "id": "be-spring-controller",
        "file_type": "java",
        "label": "backend",
        "prefix": """package com.example.shop.web;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/api/customers")
public class CustomerController {
    private final CustomerService service;

    public CustomerController(CustomerService service) {
        this.service = service;
    }

    @GetMapping("/{id}")
    public ResponseEntity<Customer> get(@PathVariable Long id) {
        """,
        "suffix": """
    }
}
""",
    },
    {
        "id": "be-go-http",
        "file_type": "go",
        "label": "backend",
        "prefix": """package main

import (
\t"encoding/json"
\t"net/http"

\t"github.com/gin-gonic/gin"
)

type User struct {
\tID   int    `json:"id"`
\tName string `json:"name"`
}

func getUser(c *gin.Context) {
\tid := c.Param("id")
\t""",
        "suffix": """
}

func main() {
\tr := gin.Default()
\tr.GET("/users/:id", getUser)
\tr.Run(":8080")
}
""",
    },
    {
        "id": "be-sql-migration",
        "file_type": "sql",
        "label": "backend",
        "prefix": """CREATE TABLE invoices (
    id SERIAL PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    total_cents INTEGER NOT NULL,
    issued_at TIMESTAMP NOT NULL DEFAULT now()
);

CREATE INDEX idx_invoices_customer ON invoices(customer_id);

SELECT c.name, SUM(i.total_cents) AS revenue
FROM customers c
JOIN invoices i ON i.customer_id = c.id
WHERE """,
        "suffix": """
GROUP BY c.name;
""",
    },
    {
        "id": "be-aspnet-minimal",
        "file_type": "cs",
        "label": "backend",
        "prefix": """using Microsoft.AspNetCore.Builder;
using Microsoft.EntityFrameworkCore;

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddDbContext<TodoDb>(opt => opt.UseInMemoryDatabase("TodoList"));
var app = builder.Build();

app.MapGet("/todos", async (TodoDb db) => await db.Todos.ToListAsync());
app.MapPost("/todos", async (Todo todo, TodoDb db) =>
{
    """,
        "suffix": """
});

app.Run();
""",
    },
    {
        "id": "be-laravel-controller",
        "file_type": "php",
        "label": "backend",
        "prefix": """<?php

namespace App\\Http\\Controllers;

use App\\Models\\Booking;
use Illuminate\\Http\\Request;

class BookingController extends Controller
{
    public function store(Request $request)
    {
        $validated = $request->validate([
            'room_id' => 'required|exists:rooms,id',
            'date' => 'required|date',
        ]);
        """,
        "suffix": """
        return response()->json($booking, 201);
    }
}
""",
    },
    {
        "id": "be-flask-auth",
        "file_type": None,
        "label": "backend",
        "prefix": """from flask import Flask, request, jsonify
import jwt
import datetime

app = Flask(__name__)
app.config["SECRET_KEY"] = "change-me"

@app.route("/login", methods=["POST"])
def login():
    data = request.get_json()
    if data["username"] != "admin" or data["password"] != "secret":
        return jsonify({"error": "bad credentials"}), 401
    token = jwt.encode(
        {"user": data["username"], "exp": datetime.datetime.utcnow() + datetime.timedelta(hours=1)},
        app.config["SECRET_KEY"],
    )
    """,
        "suffix": "",
    },
    {
        "id": "be-telegram-bot",
        "file_type": "python",
        "label": "backend",
        "prefix": """import os
import sqlite3
from telegram import Update
from telegram.ext import ApplicationBuilder, CommandHandler, ContextTypes

conn = sqlite3.connect("subscribers.db")
conn.execute("CREATE TABLE IF NOT EXISTS subs (chat_id INTEGER PRIMARY KEY)")

async def subscribe(update: Update, context: ContextTypes.DEFAULT_TYPE):
    conn.execute("INSERT OR IGNORE INTO subs VALUES (?)", (update.effective_chat.id,))
    conn.commit()
    await update.message.reply_text(""",
        "suffix": """)

app = ApplicationBuilder().token(os.environ["BOT_TOKEN"]).build()
app.add_handler(CommandHandler("subscribe", subscribe))
app.run_polling()
""",
    },
    # ------------------------------------------------------------------- data_ml
    {
        "id": "ml-pandas-clean",
        "file_type": "python",
        "label": "data_ml",
        "prefix": """import pandas as pd
import matplotlib.pyplot as plt

df = pd.read_csv("sales_2023.csv", parse_dates=["date"])
df = df.dropna(subset=["amount"])
df["month"] = df["date"].dt.to_period("M")

monthly = df.groupby("month")["amount"].sum()
""",
        "suffix": """
plt.title("Monthly revenue")
plt.show()
""",
    },
    {
        "id": "ml-torch-train",
        "file_type": "python",
        "label": "data_ml",
        "prefix": """import torch
import torch.nn as nn
from torch.utils.data import DataLoader

model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for epoch in range(10):
    model.train()
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        """,
        "suffix": """
    print(f"epoch {epoch}: loss {loss.item():.4f}")
""",
    },
    {
        "id": "ml-sklearn-pipeline",
        "file_type": None,
        "label": "data_ml",
        "prefix": """from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import roc_auc_score

X = features.drop(columns=["churned"])
y = features["churned"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y)

clf = GradientBoostingClassifier(n_estimators=300, max_depth=3)
clf.fit(X_train, y_train)
""",
        "suffix": "",
    },
    {
        "id": "ml-r-ggplot",
        "file_type": "r",
        "label": "data_ml",
        "prefix": """library(dplyr)
library(ggplot2)

penguins <- read.csv("penguins.csv")
summary_df <- penguins %>%
  filter(!is.na(body_mass_g)) %>%
  group_by(species) %>%
  summarise(mean_mass = mean(body_mass_g))

ggplot(penguins, aes(x = flipper_length_mm, y = body_mass_g, color = species)) +
  """,
        "suffix": "",
    },
    {
        "id": "ml-langchain-rag",
        "file_type": "python",
        "label": "data_ml",
        "prefix": """from langchain_community.vectorstores import Chroma
from langchain_openai import OpenAIEmbeddings, ChatOpenAI
from langchain_text_splitters import RecursiveCharacterTextSplitter

splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)
chunks = splitter.split_documents(docs)
store = Chroma.from_documents(chunks, OpenAIEmbeddings())
retriever = store.as_retriever(search_kwargs={"k": 4})
llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)

def answer(question: str) -> str:
    context = retriever.invoke(question)
    """,
        "suffix": "",
    },
    {
        "id": "ml-hf-finetune",
        "file_type": "python",
        "label": "data_ml",
        "prefix": """from datasets import load_dataset
from transformers import AutoTokenizer, AutoModelForSequenceClassification, Trainer, TrainingArguments

dataset = load_dataset("imdb")
tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")

def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, padding="max_length")

tokenized = dataset.map(tokenize, batched=True)
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
args = TrainingArguments(output_dir="out", num_train_epochs=1, per_device_train_batch_size=16)
""",
        "suffix": "",
    },
    {
        "id": "ml-opencv-detect",
        "file_type": "py",
        "label": "data_ml",
        "prefix": """import cv2
import numpy as np

img = cv2.imread("cells.png")
gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
blur = cv2.GaussianBlur(gray, (5, 5), 0)
_, mask = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
areas = np.array([cv2.contourArea(c) for c in contours])
""",
        "suffix": "",
    },
    {
        "id": "ml-notebook-eda",
        "file_type": "jupyter",
        "label": "data_ml",
        "prefix": """!pip install seaborn
import seaborn as sns
import numpy as np

tips = sns.load_dataset("tips")
tips.describe()

sns.histplot(tips["total_bill"], bins=30)

corr = tips.select_dtypes(include=np.number).corr()
""",
        "suffix": "",
    },
    {
        "id": "ml-julia-regression",
        "file_type": "julia",
        "label": "data_ml",
        "prefix": """using DataFrames, CSV, GLM, Statistics

df = CSV.read("housing.csv", DataFrame)
df.log_price = log.(df.price)
model = lm(@formula(log_price ~ sqft + bedrooms + age), df)
residuals_std = std(residuals(model))
""",
        "suffix": "",
    },
    {
        "id": "ml-spark-etl",
        "file_type": None,
        "label": "data_ml",
        "prefix": """from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.appName("events").getOrCreate()
events = spark.read.parquet("s3://bucket/events/2024/")
daily = (
    events.withColumn("day", F.to_date("ts"))
    .groupBy("day", "country")
    .agg(F.countDistinct("user_id").alias("dau"))
)
""",
        "suffix": "",
    },
    # --------------------------------------------------------------- algorithmic
    {
        "id": "algo-cpp-dijkstra",
        "file_type": "cpp",
        "label": "algorithmic",
        "prefix": """#include <bits/stdc++.h>
using namespace std;

int main() {
    int n, m;
    cin >> n >> m;
    vector<vector<pair<int,int>>> adj(n + 1);
    for (int i = 0; i < m; i++) {
        int u, v, w;
        cin >> u >> v >> w;
        adj[u].push_back({v, w});
    }
    vector<long long> dist(n + 1, LLONG_MAX);
    priority_queue<pair<long long,int>, vector<pair<long long,int>>, greater<>> pq;
    dist[1] = 0;
    pq.push({0, 1});
    while (!pq.empty()) {
        """,
        "suffix": """
    }
    cout << dist[n] << endl;
}
""",
    },
    {
        "id": "algo-py-lis",
        "file_type": "python",
        "label": "algorithmic",
        "prefix": """from bisect import bisect_left

def longest_increasing_subsequence(nums):
    tails = []
    for x in nums:
        i = bisect_left(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            """,
        "suffix": """
    return len(tails)


if __name__ == "__main__":
    n = int(input())
    arr = list(map(int, input().split()))
    print(longest_increasing_subsequence(arr))
""",
    },
    {
        "id": "algo-java-linkedlist",
        "file_type": "java",
        "label": "algorithmic",
        "prefix": """public class ReverseList {
    static class Node {
        int val;
        Node next;
        Node(int val) { this.val = val; }
    }

    static Node reverse(Node head) {
        Node prev = null;
        Node curr = head;
        while (curr != null) {
            """,
        "suffix": """
        }
        return prev;
    }

    public static void main(String[] args) {
        Node head = new Node(1);
        head.next = new Node(2);
        head.next.next = new Node(3);
        Node r = reverse(head);
    }
}
""",
    },
    {
        "id": "algo-rust-aoc",
        "file_type": "rust",
        "label": "algorithmic",
        "prefix": """use std::collections::HashSet;

fn part1(input: &str) -> usize {
    let grid: Vec<Vec<char>> = input.lines().map(|l| l.chars().collect()).collect();
    let mut visited = HashSet::new();
    let mut stack = vec![(0usize, 0usize)];
    while let Some((r, c)) = stack.pop() {
        if !visited.insert((r, c)) {
            continue;
        }
        """,
        "suffix": """
    }
    visited.len()
}
""",
    },
    {
        "id": "algo-js-leetcode",
        "file_type": "javascript",
        "label": "algorithmic",
        "prefix": """/**
 * @param {number[]} nums
 * @param {number} target
 * @return {number[]}
 */
var twoSum = function(nums, target) {
    const seen = new Map();
    for (let i = 0; i < nums.length; i++) {
        const need = target - nums[i];
        """,
        "suffix": """
    }
    return [];
};
""",
    },
    {
        "id": "algo-c-factorial-exercise",
        "file_type": "c",
        "label": "algorithmic",
        "prefix": """#include <stdio.h>

long long factorial(int n) {
    if (n <= 1) return 1;
    return n * factorial(n - 1);
}

int is_prime(int n) {
    if (n < 2) return 0;
    for (int i = 2; i * i <= n; i++) {
        """,
        "suffix": """
    }
    return 1;
}

int main(void) {
    int n;
    scanf("%d", &n);
    printf("%lld %d\\n", factorial(n), is_prime(n));
    return 0;
}
""",
    },
    {
        "id": "algo-py-nqueens",
        "file_type": None,
        "label": "algorithmic",
        "prefix": """def solve_n_queens(n):
    solutions = []
    cols, diag1, diag2 = set(), set(), set()
    board = []

    def backtrack(row):
        if row == n:
            solutions.append(list(board))
            return
        for col in range(n):
            if col in cols or row - col in diag1 or row + col in diag2:
                continue
            """,
        "suffix": """

    backtrack(0)
    return solutions
""",
    },
    {
        "id": "algo-kotlin-binsearch",
        "file_type": "kotlin",
        "label": "algorithmic",
        "prefix": """fun binarySearch(arr: IntArray, target: Int): Int {
    var lo = 0
    var hi = arr.size - 1
    while (lo <= hi) {
        val mid = (lo + hi) ushr 1
        """,
        "suffix": """
    }
    return -1
}
""",
    },
    {
        "id": "algo-go-knapsack",
        "file_type": "go",
        "label": "algorithmic",
        "prefix": """package main

import "fmt"

func knapsack(weights, values []int, capacity int) int {
\tdp := make([]int, capacity+1)
\tfor i := range weights {
\t\tfor w := capacity; w >= weights[i]; w-- {
\t\t\t""",
        "suffix": """
\t\t}
\t}
\treturn dp[capacity]
}

func main() {
\tfmt.Println(knapsack([]int{1, 3, 4}, []int{15, 20, 30}, 4))
}
""",
    },
    {
        "id": "algo-hackerrank-matrix",
        "file_type": "python",
        "label": "algorithmic",
        "prefix": """# HackerRank: Matrix Layer Rotation

def matrix_rotation(matrix, r):
    m, n = len(matrix), len(matrix[0])
    layers = min(m, n) // 2
    for layer in range(layers):
        ring = []
        """,
        "suffix": "",
    },
    # ------------------------------------------------------------------- systems
    {
        "id": "sys-bash-backup",
        "file_type": "shellscript",
        "label": "systems",
        "prefix": """#!/usr/bin/env bash
set -euo pipefail

BACKUP_DIR=/var/backups/postgres
mkdir -p "$BACKUP_DIR"
STAMP=$(date +%Y%m%d-%H%M)
pg_dump -U postgres app | gzip > "$BACKUP_DIR/app-$STAMP.sql.gz"
# keep only the last 7 dumps
""",
        "suffix": "",
    },
    {
        "id": "sys-dockerfile",
        "file_type": "dockerfile",
        "label": "systems",
        "prefix": """FROM python:3.12-slim
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
EXPOSE 8000
""",
        "suffix": "",
    },
    {
        "id": "sys-github-actions",
        "file_type": "yaml",
        "label": "systems",
        "prefix": """name: CI
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: npm ci
      - run: """,
        "suffix": "",
    },
    {
        "id": "sys-c-linked-driver",
        "file_type": "c",
        "label": "systems",
        "prefix": """#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/fs.h>

static int major;

static ssize_t dev_read(struct file *f, char __user *buf, size_t len, loff_t *off)
{
    """,
        "suffix": """
}

static struct file_operations fops = {
    .read = dev_read,
};

static int __init hello_init(void)
{
    major = register_chrdev(0, "hello", &fops);
    return 0;
}
module_init(hello_init);
""",
    },
    {
        "id": "sys-rust-threads",
        "file_type": "rs",
        "label": "systems",
        "prefix": """use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::fs::File;
use std::io::{BufRead, BufReader};

fn main() -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel();
    let counter = Arc::new(Mutex::new(0u64));
    let mut handles = Vec::new();
    for path in std::env::args().skip(1) {
        let tx = tx.clone();
        let counter = Arc::clone(&counter);
        handles.push(thread::spawn(move || {
            let f = File::open(&path).unwrap();
            """,
        "suffix": "",
    },
    {
        "id": "sys-python-cleanup-script",
        "file_type": "python",
        "label": "systems",
        "prefix": """import argparse
import os
import shutil
import time

parser = argparse.ArgumentParser(description="Delete old log files")
parser.add_argument("directory")
parser.add_argument("--days", type=int, default=30)
args = parser.parse_args()

cutoff = time.time() - args.days * 86400
for root, dirs, files in os.walk(args.directory):
    for name in files:
        path = os.path.join(root, name)
        if name.endswith(".log") and os.path.getmtime(path) < cutoff:
            """,
        "suffix": "",
    },
    {
        "id": "sys-arduino-serial",
        "file_type": "cpp",
        "label": "systems",
        "prefix": """#include <Arduino.h>

const int LED_PIN = 13;
const int SENSOR_PIN = A0;

void setup() {
  pinMode(LED_PIN, OUTPUT);
  Serial.begin(9600);
}

void loop() {
  int value = analogRead(SENSOR_PIN);
  Serial.println(value);
  if (value > 512) {
    """,
        "suffix": """
  }
  delay(100);
}
""",
    },
    {
        "id": "sys-terraform",
        "file_type": "tf",
        "label": "systems",
        "prefix": """provider "aws" {
  region = "eu-west-1"
}

resource "aws_s3_bucket" "logs" {
  bucket = "acme-app-logs"
}

resource "aws_instance" "web" {
  ami           = "ami-0c55b159cbfafe1f0"
  instance_type = "t3.micro"
  """,
        "suffix": "",
    },
    {
        "id": "sys-powershell",
        "file_type": "powershell",
        "label": "systems",
        "prefix": """$services = Get-Service | Where-Object { $_.Status -eq 'Stopped' -and $_.StartType -eq 'Automatic' }
foreach ($svc in $services) {
    Write-Host "Starting $($svc.Name)"
    """,
        "suffix": "",
    },
    {
        "id": "sys-cpp-lockfree",
        "file_type": None,
        "label": "systems",
        "prefix": """#include <atomic>
#include <thread>
#include <memory>

template <typename T>
class SpscQueue {
public:
    explicit SpscQueue(size_t capacity) : buf_(new T[capacity]), cap_(capacity) {}

    bool push(const T& v) {
        size_t head = head_.load(std::memory_order_relaxed);
        size_t next = (head + 1) % cap_;
        if (next == tail_.load(std::memory_order_acquire)) return false;
        """,
        "suffix": """
    }

private:
    std::unique_ptr<T[]> buf_;
    size_t cap_;
    std::atomic<size_t> head_{0}, tail_{0};
};
""",
    },
    # --------------------------------------------------------------------- other
    {
        "id": "other-readme",
        "file_type": "markdown",
        "label": "other",
        "prefix": """# Project Atlas

Atlas is a small tool for keeping track of reading notes.

## Installation

Clone the repository and follow the steps below.

## Usage

""",
        "suffix": "",
    },
    {
        "id": "other-latex",
        "file_type": "latex",
        "label": "other",
        "prefix": """\\documentclass{article}
\\usepackage{amsmath}
\\begin{document}
\\section{Introduction}
Soil moisture varies strongly with depth and season. In this report we
""",
        "suffix": """
\\end{document}
""",
    },
    {
        "id": "other-plaintext-notes",
        "file_type": None,
        "label": "other",
        "prefix": """meeting notes 12 march
- Anna will send the budget draft by friday
- ask Tom about the venue for the offsite
- next meeting: """,
        "suffix": "",
    },
    {
        "id": "other-json-fixture",
        "file_type": "json",
        "label": "other",
        "prefix": """[
  {"name": "Alice", "age": 31, "city": "Lisbon"},
  {"name": "Bruno", "age": 27, "city": "Porto"},
  """,
        "suffix": """
]
""",
    },
    {
        "id": "other-tiny-hello",
        "file_type": "python",
        "label": "other",
        "prefix": """print("hello")
name = """,
        "suffix": "",
    },
    {
        "id": "other-comment-only",
        "file_type": None,
        "label": "other",
        "prefix": """# write a poem about autumn leaves
""",
        "suffix": "",
    },
    {
        "id": "other-email-draft",
        "file_type": "plaintext",
        "label": "other",
        "prefix": """Hi Maria,

Thanks for the quick reply. I looked at the schedule you sent and I think Tuesday works
better for everyone on our side. Could you """,
        "suffix": "",
    },
    {
        "id": "other-csv",
        "file_type": "csv",
        "label": "other",
        "prefix": """date,city,temperature
2024-01-01,Oslo,-3.5
2024-01-02,Oslo,-4.1
2024-01-03,""",
        "suffix": "",
    },
]


# Written after the rules were tuned on SNIPPETS, to estimate accuracy on unseen code;
# languages and libraries deliberately differ from above. First measurement, before any
# rule saw them: 15/18 (83%); the misses were a LÖVE game, a Rails controller and a
# union-find. Rules for those three were then added, so this set is no longer held out
# and new unseen snippets are needed for the next honest estimate.
HELD_OUT_SNIPPETS: list[dict] = [
    {
        "id": "ho-fe-kotlin-compose",
        "file_type": "kotlin",
        "label": "frontend",
        "prefix": """import androidx.compose.foundation.layout.Column
import androidx.compose.material3.Button
import androidx.compose.material3.Text
import androidx.compose.runtime.*

@Composable
fun Greeting(name: String) {
    var clicks by remember { mutableStateOf(0) }
    Column {
        Text(text = "Hello $name, clicked $clicks times")
        Button(onClick = { """,
        "suffix": """ }) {
            Text("Click me")
        }
    }
}
""",
    },
    {
        "id": "ho-fe-swiftui",
        "file_type": "swift",
        "label": "frontend",
        "prefix": """import SwiftUI

struct SettingsView: View {
    @State private var notificationsOn = true
    var body: some View {
        NavigationStack {
            Form {
                Toggle("Notifications", isOn: $notificationsOn)
                """,
        "suffix": """
            }
            .navigationTitle("Settings")
        }
    }
}
""",
    },
    {
        "id": "ho-fe-lua-love",
        "file_type": None,
        "label": "frontend",
        "prefix": """function love.load()
    player = { x = 100, y = 100, speed = 200 }
    love.graphics.setBackgroundColor(0.1, 0.1, 0.2)
end

function love.update(dt)
    if love.keyboard.isDown("right") then
        player.x = player.x + player.speed * dt
    end
    """,
        "suffix": """
end

function love.draw()
    love.graphics.rectangle("fill", player.x, player.y, 32, 32)
end
""",
    },
    {
        "id": "ho-be-rails",
        "file_type": "ruby",
        "label": "backend",
        "prefix": """class ArticlesController < ApplicationController
  before_action :authenticate_user!

  def create
    @article = current_user.articles.new(article_params)
    if @article.save
      redirect_to @article, notice: "Article created"
    else
      render :new, status: :unprocessable_entity
    end
  end

  private

  def article_params
    """,
        "suffix": """
  end
end
""",
    },
    {
        "id": "ho-be-nest",
        "file_type": "typescript",
        "label": "backend",
        "prefix": """import { Controller, Get, Param, NotFoundException } from '@nestjs/common';
import { UsersService } from './users.service';

@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get(':id')
  async findOne(@Param('id') id: string) {
    const user = await this.users.findById(id);
    """,
        "suffix": """
  }
}
""",
    },
    {
        "id": "ho-be-go-sql",
        "file_type": "go",
        "label": "backend",
        "prefix": """package store

import (
\t"context"
\t"database/sql"
)

type Repo struct{ db *sql.DB }

func (r *Repo) UserEmail(ctx context.Context, id int64) (string, error) {
\tvar email string
\terr := r.db.QueryRowContext(ctx, "SELECT email FROM users WHERE id = $1", id).Scan(&email)
\t""",
        "suffix": "",
    },
    {
        "id": "ho-ml-matlab",
        "file_type": "matlab",
        "label": "data_ml",
        "prefix": """data = readtable('measurements.csv');
t = data.time;
y = data.voltage;
p = polyfit(t, y, 3);
yfit = polyval(p, t);
figure;
plot(t, y, 'o', t, yfit, '-');
""",
        "suffix": "",
    },
    {
        "id": "ho-ml-keras",
        "file_type": None,
        "label": "data_ml",
        "prefix": """from tensorflow import keras
from tensorflow.keras import layers

model = keras.Sequential([
    layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
    layers.MaxPooling2D(),
    layers.Flatten(),
    layers.Dense(10, activation="softmax"),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(x_train, y_train, validation_split=0.1, """,
        "suffix": "",
    },
    {
        "id": "ho-ml-openai-eval",
        "file_type": "python",
        "label": "data_ml",
        "prefix": """from openai import OpenAI
import json

client = OpenAI()

def grade(question: str, answer: str) -> int:
    prompt = f"Rate the answer from 1 to 5.\\nQuestion: {question}\\nAnswer: {answer}"
    resp = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": prompt}],
    )
    """,
        "suffix": "",
    },
    {
        "id": "ho-algo-haskell",
        "file_type": "haskell",
        "label": "algorithmic",
        "prefix": """quicksort :: Ord a => [a] -> [a]
quicksort [] = []
quicksort (p:xs) = quicksort smaller ++ [p] ++ quicksort larger
  where
    smaller = filter (< p) xs
    larger  = """,
        "suffix": "",
    },
    {
        "id": "ho-algo-cpp-union-find",
        "file_type": "cpp",
        "label": "algorithmic",
        "prefix": """#include <vector>
#include <numeric>

struct DSU {
    std::vector<int> parent, rank_;
    explicit DSU(int n) : parent(n), rank_(n, 0) { std::iota(parent.begin(), parent.end(), 0); }
    int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
    bool unite(int a, int b) {
        a = find(a); b = find(b);
        if (a == b) return false;
        """,
        "suffix": "",
    },
    {
        "id": "ho-algo-python-sieve",
        "file_type": "python",
        "label": "algorithmic",
        "prefix": """def sieve(limit):
    is_prime = [True] * (limit + 1)
    is_prime[0] = is_prime[1] = False
    for i in range(2, int(limit ** 0.5) + 1):
        if is_prime[i]:
            """,
        "suffix": """
    return [i for i, p in enumerate(is_prime) if p]

print(sum(sieve(2_000_000)))
""",
    },
    {
        "id": "ho-sys-makefile",
        "file_type": "makefile",
        "label": "systems",
        "prefix": """CC=gcc
CFLAGS=-O2 -Wall
OBJS=main.o util.o

app: $(OBJS)
\t$(CC) $(CFLAGS) -o $@ $^

clean:
\t""",
        "suffix": "",
    },
    {
        "id": "ho-sys-go-cli",
        "file_type": None,
        "label": "systems",
        "prefix": """package main

import (
\t"flag"
\t"fmt"
\t"os"
\t"os/exec"
)

func main() {
\tdir := flag.String("dir", ".", "directory to watch")
\tflag.Parse()
\tcmd := exec.Command("rsync", "-a", *dir, "backup:/srv/backups/")
\tcmd.Stdout = os.Stdout
\t""",
        "suffix": "",
    },
    {
        "id": "ho-sys-ansible",
        "file_type": "yml",
        "label": "systems",
        "prefix": """- hosts: webservers
  become: true
  tasks:
    - name: install nginx
      apt:
        name: nginx
        state: present
    - name: start nginx
      service:
        name: nginx
        """,
        "suffix": "",
    },
    {
        "id": "ho-other-rst",
        "file_type": "markdown",
        "label": "other",
        "prefix": """## Changelog

### 1.4.0
- Added dark mode
- Fixed a crash when the settings file was missing

### 1.3.2
- """,
        "suffix": "",
    },
    {
        "id": "ho-other-yaml-data",
        "file_type": None,
        "label": "other",
        "prefix": """recipes:
  - title: Pancakes
    servings: 4
    ingredients: [flour, milk, eggs]
  - title: """,
        "suffix": "",
    },
    {
        "id": "ho-other-hello",
        "file_type": "javascript",
        "label": "other",
        "prefix": """// my first program
console.log("Hello, world!");
let name = """,
        "suffix": "",
    },
]
