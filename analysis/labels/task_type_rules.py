"""The task-type classifier's evidence: the features it reads and its table of weighted rules.

``RULES`` is the score table of ``analysis.labels.task_type`` (whose docstring says how a
rule scores and what each label means); a rule's ``hits`` counts its evidence in a
``Features``. Bump ``task_type.VERSION`` whenever this table changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Literal


@dataclass(frozen=True)
class Features:
    """What the rules look at (see module docstring)."""

    language: str
    imports: frozenset[str]
    words: frozenset[str]
    line_heads: frozenset[str]
    text: str


RuleKind = Literal["language", "import", "word", "line_head", "substring", "pattern"]


@dataclass(frozen=True)
class Rule:
    """One row of the score table; see the module docstring for how it scores."""

    label: str
    weight: float
    kind: RuleKind
    values: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    cap: int = 2
    name: str = ""
    # Derived lookup structures: values as a set, and "prefix*" import values apart.
    _set: frozenset[str] = field(init=False, repr=False, compare=False)
    _prefixes: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_set", frozenset(v for v in self.values if not v.endswith("*")))
        object.__setattr__(self, "_prefixes", tuple(v[:-1] for v in self.values if v.endswith("*")))

    def hits(self, features: Features) -> int:
        """How much evidence for this rule the features contain (before the cap)."""
        kind = self.kind
        if kind == "language":
            return int(features.language in self._set)
        if kind == "word":
            return len(self._set & features.words)
        if kind == "line_head":
            return len(self._set & features.line_heads)
        if kind == "import":
            found = len(self._set & features.imports)
            if self._prefixes:
                found += sum(1 for module in features.imports if module.startswith(self._prefixes))
            return found
        if kind == "substring":
            text = features.text
            return sum(1 for value in self.values if value in text)
        if self.pattern is None:
            raise RuntimeError(f"a {kind} rule has a compiled pattern")
        return sum(1 for _ in islice(self.pattern.finditer(features.text), self.cap))


def _lang(label: str, weight: float, *languages: str) -> Rule:
    return Rule(label, weight, "language", languages, cap=1, name=f"language in {languages}")


def _imp(label: str, weight: float, *modules: str, cap: int = 2) -> Rule:
    return Rule(label, weight, "import", modules, cap=cap, name=f"imports {modules[:3]}...")


def _kw(label: str, weight: float, *words: str, cap: int = 3) -> Rule:
    return Rule(label, weight, "word", words, cap=cap, name=f"words {words[:3]}...")


def _head(label: str, weight: float, *heads: str, cap: int = 3, name: str) -> Rule:
    return Rule(label, weight, "line_head", heads, cap=cap, name=name)


def _sub(label: str, weight: float, *substrings: str, cap: int = 2, name: str) -> Rule:
    return Rule(label, weight, "substring", substrings, cap=cap, name=name)


def _pat(label: str, weight: float, regex: str, *, cap: int = 2, name: str) -> Rule:
    return Rule(label, weight, "pattern", pattern=re.compile(regex), cap=cap, name=name)


# Advent-of-Code style file and function names ("day16", "part1").
_PUZZLE_WORDS = tuple(
    [f"day{i}" for i in range(1, 26)]
    + [f"day{i:02d}" for i in range(1, 10)]
    + ["part1", "part2", "part_1", "part_2", "part_one", "part_two", "partOne", "partTwo"]
)

# fmt: off
RULES: tuple[Rule, ...] = (
    # ---------------------------------------------------------------- frontend
    _lang("frontend", 4, "html", "css", "vue", "svelte", "gdscript"),
    _lang("frontend", 2, "dart", "shader"),
    _lang("frontend", 1, "swift", "objective-c"),
    _imp("frontend", 3, "react", "react-dom", "react-native", "next", "vue", "@angular",
         "svelte", "solid-js", "preact", "@mui", "@chakra-ui", "@emotion", "styled-components",
         "@headlessui", "@radix-ui", "lucide-react", "framer-motion", "@react-navigation",
         "expo", "redux", "react-redux", "@reduxjs", "zustand", "jquery", "three", "vscode",
         "electron", "tkinter", "pyqt5", "pyqt6", "pyside2", "pyside6", "kivy", "wx",
         "pygame", "pgzrun", "pgzero", "arcade", "pyglet", "unityengine", "godot", "flutter",
         "get_storage", "swiftui", "uikit", "appkit", "android", "androidx", "javafx",
         "javax.swing", "java.awt", "tailwindcss", "d3", "chart.js", "leaflet", "bootstrap",
         "@testing-library", "@storybook", "@tanstack", "react-router-dom", "@inertiajs"),
    _kw("frontend", 2, "useState", "useEffect", "useRef", "useMemo", "useCallback",
        "useContext", "useRouter", "useParams", "useNavigate", "className", "onClick",
        "onChange", "onPress", "onSubmit", "setState", "StyleSheet", "MonoBehaviour",
        "GameObject", "Rigidbody2D", "Rigidbody", "CharacterBody2D", "KinematicBody2D",
        "Node2D", "_physics_process", "StatelessWidget", "StatefulWidget", "BuildContext",
        "Scaffold", "mainloop", "QWidget", "QMainWindow", "ngOnInit", "defineProps",
        "addEventListener", "querySelector", "getElementById", "innerHTML", "Tk"),
    _kw("frontend", 1, "document", "window", "localStorage", "render", "Component",
        "navigation", "tabBar", "Button", "Label", "canvas", "sprite", "screen", "onload",
        "href", "div", "styles", "tailwind", "blit", "Actor"),
    _pat("frontend", 1.5,
         r"(?=<)</?(?:div|span|button|nav|header|footer|section|main|form|input|img|ul|li|"
         r"h[1-6]|p|a|body|head|html|script|style|label|table|tr|td|select|option|textarea|"
         r"svg|template|meta|link|title|aside|article)\b[^>\n]{0,200}>",
         cap=3, name="HTML tags"),
    _pat("frontend", 1.5, r"(?=<)(?:</[A-Z][\w.]*>|<[A-Z][\w.]*\s[^<>]{0,300}/>)",
         name="JSX elements"),
    _head("frontend", 1.5, "color:", "background:", "background-color:", "background-image:",
          "margin:", "margin-top:", "margin-bottom:", "padding:", "display:", "font-size:",
          "font-family:", "font-weight:", "border:", "border-radius:", "flex-direction:",
          "justify-content:", "align-items:", "text-align:", "box-shadow:", "transition:",
          "grid-template-columns:", "text-decoration:", "list-style:",
          name="CSS declarations"),
    _sub("frontend", 2, "@extends(", "@section(", "@yield(", "@endsection", "@foreach",
         "{% block", "{% extends", "{{--", "v-for=", "v-if=", "*ngFor", "on:click",
         name="template syntax"),
    _sub("frontend", 3, "love.graphics", "love.draw", "love.update", "love.load",
         "love.keyboard", name="LÖVE game callbacks"),
    _sub("frontend", 2, "document.getElementById", "document.querySelector",
         "document.createElement", "document.body", ".addEventListener(",
         name="DOM calls"),
    # ----------------------------------------------------------------- backend
    _lang("backend", 3, "sql"),
    _lang("backend", 2, "graphql", "protobuf"),
    _lang("backend", 1.5, "php"),
    _imp("backend", 3, "express", "fastify", "koa", "@nestjs", "hono", "elysia", "mongoose",
         "mongodb", "@prisma", "prisma", "sequelize", "typeorm", "knex", "pg", "mysql",
         "mysql2", "redis", "ioredis", "jsonwebtoken", "bcrypt", "bcryptjs", "passport",
         "cors", "body-parser", "multer", "cookie-parser", "express-graphql", "apollo-server",
         "@apollo/server", "nodemailer", "stripe", "fastapi", "flask", "django", "starlette",
         "uvicorn", "gunicorn", "sqlalchemy", "psycopg2", "psycopg", "pymongo", "motor",
         "asyncpg", "aiomysql", "celery", "discord", "telegram", "slack_sdk", "slack_bolt",
         "twilio", "grpc", "jwt", "werkzeug", "tornado", "sanic", "bottle", "peewee",
         "alembic", "marshmallow", "org.springframework", "javax.servlet", "jakarta.servlet",
         "jakarta.persistence", "javax.persistence", "org.hibernate", "microsoft.aspnetcore",
         "microsoft.azure.functions", "microsoft.azure.webjobs",
         "microsoft.entityframeworkcore", "net/http", "database/sql", "github.com/gin-gonic",
         "github.com/labstack", "github.com/gofiber", "github.com/gorilla", "gorm.io",
         "actix_web", "axum", "rocket", "warp", "sqlx", "diesel", "illuminate", "laravel",
         "symfony", "rails", "sinatra", "active_record", "phoenix", "ecto", "socket.io",
         "firebase-admin", "@supabase", "next-auth", "@auth"),
    _imp("backend", 1.5, "sqlite3", "aiohttp", "boto3", "graphql", "pydantic", "websockets",
         "dotenv", "httpx", "microsoft.extensions.dependencyinjection"),
    _kw("backend", 2, "HttpResponse", "HttpRequest", "HTTPException", "JsonResponse",
        "APIRouter", "Blueprint", "jsonify", "get_object_or_404", "ResponseEntity",
        "RestController", "asyncHandler", "ApiError", "ApiResponse", "findById", "findOne",
        "findMany", "findByIdAndUpdate", "QuerySet", "middleware", "endpoint", "bcrypt",
        "jwt", "LoginRequiredMixin", "ListView", "DetailView", "CreateView", "connectDB",
        "HttpStatusCode", "HttpRequestData", "ILogger", "Depends", "webhook",
        "ApplicationController", "ActionController", "before_action", "redirect_to",
        "ActiveRecord", "current_user", "authenticate_user"),
    _kw("backend", 1, "SELECT", "FROM", "WHERE", "INSERT", "VALUES", "JOIN", "GROUP",
        "ORDER", "CREATE", "TABLE", "PRIMARY", "REFERENCES", "request", "response",
        "session", "database", "db", "api", "auth", "token", "server", "router"),
    _sub("backend", 3, "@app.get(", "@app.post(", "@app.put(", "@app.delete(",
         "@app.route(", "@app.websocket(", "@router.get(", "@router.post(", "@router.put(",
         "@router.delete(", "@bp.route(", "app.get(", "app.post(", "app.put(", "app.delete(",
         "app.use(", "app.listen(", "router.get(", "router.post(", "router.put(",
         "router.delete(", "server.listen(", "app.MapGet(", "app.MapPost(", "r.GET(",
         "r.POST(", "Route::get(", "Route::post(",
         name="route registrations"),
    _sub("backend", 2, "res.status(", "res.json(", "res.send(", "res.render(",
         "res.redirect(", "req.body", "req.params", "req.query", "req.headers", "req.user",
         "request.POST", "request.GET", "request.method", "request.get_json(",
         "request.form", "request.args", "$request->", "response()->json",
         "params.require(", "render json:", "conn |> ",
         name="request/response handling"),
    _sub("backend", 3, "export async function GET", "export async function POST",
         "export async function PUT", "export async function DELETE", "export const GET",
         "export const POST", "@RestController", "@Controller", "@RequestMapping",
         "@GetMapping", "@PostMapping", "[HttpGet", "[HttpPost", "[ApiController",
         "[Function(", name="handler declarations"),
    _sub("backend", 3, "models.Model", "models.CharField", "models.ForeignKey",
         "models.IntegerField", "models.TextField", "forms.ModelForm", "forms.Form",
         ".objects.filter(", ".objects.get(", ".objects.all(", ".objects.create(",
         name="Django models/forms/ORM"),
    _sub("backend", 2, "cursor.execute(", "conn.commit(", "connection.commit(",
         ".cursor()", "db.query(", "db.session", "db.add(",
         name="database calls"),
    # ----------------------------------------------------------------- data_ml
    _lang("data_ml", 3, "r"),
    _lang("data_ml", 2, "julia", "matlab"),
    _imp("data_ml", 3, "pandas", "polars", "sklearn", "torch", "torchvision", "torchaudio",
         "tensorflow", "keras", "jax", "flax", "transformers", "datasets", "tokenizers",
         "sentence_transformers", "peft", "accelerate", "trl", "diffusers", "huggingface_hub",
         "matplotlib", "seaborn", "plotly", "bokeh", "altair", "statsmodels", "xgboost",
         "lightgbm", "catboost", "cv2", "skimage", "geopandas", "rasterio", "dask", "pyspark",
         "nltk", "spacy", "gensim", "langchain*", "langgraph", "llama_index", "chromadb",
         "faiss", "pinecone", "mlflow", "wandb", "optuna", "onnx", "onnxruntime",
         "ultralytics", "mediapipe", "timm", "einops", "lightning", "pytorch_lightning",
         "librosa", "dplyr", "ggplot2", "tidyverse", "tidyr", "readr", "caret", "dataframes",
         "glm", "flux", "@tensorflow", "ml5", "brain.js"),
    _imp("data_ml", 2, "numpy", "scipy", "shapely", "pyarrow", "openai", "anthropic",
         "ollama", "google.generativeai", "instructor", "gradio", "streamlit", "promptflow",
         "pil", "imageio", "sympy", "networkx", "tiktoken", "vllm", "statistics", "plots"),
    _imp("data_ml", 1, "tqdm", "csv"),
    _kw("data_ml", 2, "DataFrame", "fillna", "groupby", "read_csv", "read_parquet",
        "train_test_split", "fit_transform", "DataLoader", "optimizer", "epoch", "epochs",
        "tokenizer", "embeddings", "batch_size", "ndarray", "imshow", "iloc", "dropna",
        "learning_rate", "model_name", "subplots", "xlabel", "ylabel", "dataset", "datasets"),
    _kw("data_ml", 1, "df", "loss", "accuracy", "tensor", "predict", "plt", "np", "pd", "sns",
        "cluster", "clusters", "llm", "prompt", "embedding", "inference", "regression",
        "classifier", "features", "labels", "mean", "std", "plot", "mse", "image", "pixels"),
    _head("data_ml", 2, "!pip", "%pip", "%matplotlib", "%load_ext", "!wget", "!nvidia-smi",
          "!git", "%%time", "%time", "!ls", name="notebook magics"),
    _sub("data_ml", 1.5, ".fit(", ".predict(", ".predict_proba(", ".fit_transform(",
         ".to(device)", ".cuda()", ".backward()", ".zero_grad()", "model.eval()",
         "torch.no_grad()", name="fit/predict/training calls"),
    _sub("data_ml", 2, "\"role\": \"assistant\"", "\"role\": \"user\"", "\"role\": \"system\"",
         "'role': 'assistant'", "'role': 'user'", "'role': 'system'",
         name="chat-message data"),
    # ------------------------------------------------------------- algorithmic
    _imp("algorithmic", 4, "bits/stdc++.h"),
    _imp("algorithmic", 2, "heapq", "bisect"),
    _imp("algorithmic", 1, "itertools", "functools", "collections", "java.util", "math",
         "std::collections", "algorithm", "vector", "queue", "stack", "unordered_map",
         "climits", "cmath", "iostream"),
    _kw("algorithmic", 2, "quicksort", "quickSort", "quick_sort", "mergeSort", "merge_sort",
        "bubbleSort", "bubble_sort", "insertionSort", "selectionSort", "countingSort",
        "heapSort", "binarySearch", "binary_search", "bfs", "dfs", "BFS", "DFS", "dijkstra",
        "Dijkstra", "memo", "fibonacci", "fib", "factorial", "gcd", "lcm", "isPrime",
        "is_prime", "primes", "backtrack", "heappush", "heappop", "heapify", "ListNode",
        "TreeNode", "inorder", "preorder", "postorder", "inOrder", "preOrder", "postOrder",
        "levelOrder", "lca", "segment_tree", "segmentTree", "knapsack", "palindrome",
        "subsequence", "subarray", "anagram", "twoSum", "bisect_left", "bisect_right",
        "visited", "adj", "dp", "BST", "isBST", "createTree", "buildTree", "linkedList",
        "LinkedList", "doublyLL", "circularQueue", "traversal", "traversals", "DSU",
        "UnionFind", "union_find", "unite", "find_set", "topological_sort", "toposort"),
    _kw("algorithmic", 1, "sort", "sorted", "recursion", "recursive", "heap", "stack",
        "queue", "matrix", "graph", "tree", "Node", "node", "root", "left", "right", "prev",
        "head", "tail", "arr", "nums", "permutations", "combinations", "swap", "mid",
        "target", "grid", "prime", "Complex", "Queue", "Stack", "insert", "dist", "parent",
        "rank"),
    _kw("algorithmic", 3, "leetcode", "LeetCode", "Leetcode", "hackerrank", "HackerRank",
        "Hackerrank", "codeforces", "Codeforces", "atcoder", "AtCoder", "kattis", "Kattis",
        "codewars", "Codewars", cap=1),
    _kw("algorithmic", 1.5, *_PUZZLE_WORDS, cap=2),
    _sub("algorithmic", 2, "input()", "sys.stdin", "cin >>", "cin>>", "scanf(",
         "Scanner(System.in)", "InputStreamReader(System.in)", "io::stdin",
         "bufio.NewReader(os.Stdin)", "bufio.NewScanner(os.Stdin)", "readLine()",
         name="stdin input"),
    _sub("algorithmic", 3, "1000000007", "10**9 + 7", "10**9+7", "1e9 + 7", "1e9+7",
         name="mod 1e9+7"),
    _sub("algorithmic", 1, "public static void main(", name="Java main"),
    # ----------------------------------------------------------------- systems
    _lang("systems", 4, "shell", "powershell", "batch", "dockerfile", "makefile", "cmake",
          "terraform", "assembly", "verilog", "vhdl"),
    _lang("systems", 3, "nix", "starlark"),
    _lang("systems", 2, "yaml", "zig"),
    _lang("systems", 1.5, "c", "ini"),
    _lang("systems", 1, "rust", "toml", "cuda"),
    _imp("systems", 3, "subprocess", "shutil", "ctypes", "serial", "psutil", "paramiko",
         "docker", "kubernetes", "signal", "fcntl", "linux", "unistd.h", "pthread.h",
         "fcntl.h", "signal.h", "arduino.h", "avr", "freertos", "esp_*", "driver",
         "child_process", "libc", "nix", "embedded_hal", "cortex_m", "os/exec", "syscall",
         "golang.org/x/sys", "system.runtime.interopservices", "std::process", "std::fs",
         "std::net", "sys/socket.h", "sys/types.h", "sys/stat.h", "sys/mman.h",
         "windows.h", "winapi", "pyudev", "smbus", "gpiozero", "watchdog", "fabric",
         "ansible", "plumbum", "sh"),
    _imp("systems", 2, "argparse", "socket", "glob", "hashlib", "thread", "mutex", "atomic",
         "condition_variable", "std::thread", "std::sync", "std::env", "threading",
         "multiprocessing", "platform", "java.nio", "java.util.concurrent", "system.io",
         "system.diagnostics", "system.threading", "fs", "tokio", "stdint.h"),
    _imp("systems", 1, "os", "sys", "pathlib", "path"),
    _kw("systems", 2, "kernel", "syscall", "Mutex", "mutex", "semaphore", "spinlock",
        "interrupt", "irq", "malloc", "calloc", "realloc", "mmap", "ioctl", "fork", "execve",
        "daemon", "systemctl", "sudo", "chmod", "baud", "baudrate", "serial_baud", "uart",
        "UART", "gpio", "GPIO", "i2c", "firmware", "volatile", "no_std", "no_main",
        "panic_handler", "BootInfo", "vga", "VGA", "pthread_create", "pthread_mutex_lock",
        "AtomicUsize", "memory_order_relaxed", "memory_order_acquire",
        "memory_order_release", "pinMode", "digitalWrite", "analogRead", "register_chrdev",
        "ThreadSafeQueue", "compareAndSet", "AtomicReference", "AtomicInteger",
        "AtomicReferenceArray", "hexdigest", "getsize", "getmtime", "listdir", "makedirs",
        "comports", "crontab", "rsync"),
    _kw("systems", 1, "thread", "threads", "socket", "serial", "port", "pid", "process",
        "buffer", "memory", "heap", "directory", "filesystem", "mkdir", "unsafe",
        "shared_ptr", "unique_ptr", "sizeof", "size_t", "uint8_t", "uint32_t", "Arc",
        "spawn", "exit", "env", "config", "logger", "backup", "file_path"),
    _head("systems", 4, "#!/bin/bash", "#!/bin/sh", "#!/bin/zsh", "#!/usr/bin/bash",
          "#!/bin/dash", cap=1, name="shell shebang"),
    _head("systems", 1.5, "#!/usr/bin/env", cap=1, name="env shebang"),
    _head("systems", 1.5, "sudo", "apt", "apt-get", "yum", "dnf", "brew", "systemctl",
          "chmod", "chown", "rsync", "scp", "ssh", "curl", "wget", "tar", "docker",
          "kubectl", "helm", "ansible-playbook", "mkdir", "rm", "cp", "mv", "ln", "pip",
          "npm", "make", "set", "echo", "cd", name="shell commands"),
    _head("systems", 2, "RUN", "COPY", "WORKDIR", "ENTRYPOINT", "EXPOSE", "ENV", "ARG",
          "USER", "CMD", name="Dockerfile instructions"),
    _head("systems", 1.5, "runs-on:", "uses:", "jobs:", "apiVersion:", "containers:",
          "replicas:", "steps:", "stages:", "kind:", "resource", "provider", "services:",
          "volumes:", name="CI/k8s/terraform keys"),
    _sub("systems", 1, "os.walk(", "os.listdir(", "os.makedirs(", "os.remove(", "os.rename(",
         "os.system(", "os.chmod(", "os.getenv(", "os.environ", "os.path.getsize(",
         "os.path.getmtime(", "shutil.", "subprocess.", "sys.argv", cap=3,
         name="Python OS calls"),
    _sub("systems", 1, "malloc(", "calloc(", "realloc(", "free(", "memcpy(", "memset(",
         cap=3, name="manual memory"),
    _sub("systems", 3, "Serial.begin(", "Serial.println(", "Serial.print(", "pinMode(",
         "digitalWrite(", "digitalRead(", "analogRead(", name="Arduino I/O"),
    _sub("systems", 3, "#![no_std]", "#![no_main]", "#[panic_handler]", "#[kmain]",
         "#[entry]", "asm!(", name="bare-metal Rust"),
    _sub("systems", 2, "std::thread", "std::mutex", "std::atomic", "std::lock_guard",
         "std::unique_lock", "std::condition_variable", "memory_order_", "pthread_",
         name="C++/POSIX concurrency"),
    _sub("systems", 2, "Write-Host", "Write-Output", "Get-ChildItem", "Get-Service",
         "Get-Content", "Get-Process", "Set-Location", "New-Item", "Remove-Item",
         "Where-Object", "ForEach-Object", "Start-Process", "Invoke-WebRequest", "Test-Path",
         "Import-Module", "$PSScriptRoot", "-ErrorAction", cap=3,
         name="PowerShell cmdlets"),
    # ------------------------------------------------------------------- other
    _lang("other", 4, "markdown", "plaintext", "latex", "csv"),
    _lang("other", 2, "json"),
    _lang("other", 1.5, "xml"),
    _sub("other", 4, "\\documentclass", "\\begin{document}", "\\usepackage", "\\maketitle",
         cap=1, name="LaTeX"),
)
# fmt: on
