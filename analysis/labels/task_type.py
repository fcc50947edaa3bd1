"""Task-type slice label: what kind of work the developer is doing, from the code context.

A transparent rule-based classifier. Every rule is one row of ``RULES``: a label, a
weight, the evidence it looks for, and a cap. The context is first reduced to a few
cheap features:

* ``language``   - the canonical programming language (from ``normalize_language``);
* ``imports``    - module names from import/include/using/use/require/library lines of
  the common languages, plus their parent packages (``sklearn.cluster`` also gives
  ``sklearn``; ``@angular/core`` also gives ``@angular``), lower-cased;
* ``words``      - the set of identifier-like tokens (case kept: ``SELECT`` is not
  ``select``);
* ``line_heads`` - the first whitespace-separated token of every line, after leading
  spaces and list dashes (``RUN``, ``sudo``, ``runs-on:``, ``!pip``, ``color:``);
* ``text``       - the raw text, for literal substrings (``"cursor.execute("``) and the
  two regular expressions (HTML tags, JSX elements).

Rule kinds and their *hits*: ``language`` (1 if the language is listed), ``import``,
``word`` and ``line_head`` (how many of the listed values are present; an import value
ending in ``*`` matches as a prefix), ``substring`` (how many of the listed strings occur
in the text) and ``pattern`` (number of regex matches). A rule adds
``weight * min(hits, cap)`` to its label. The label with the highest total wins if it
reaches ``MIN_SCORE``; otherwise the answer is ``"other"`` (too little evidence). Ties go
to the label listed first in ``TASK_TYPES``. ``RuleBasedTaskTypeClassifier.explain``
returns the score table and every rule that fired: use it to debug or tune a rule.

Labels (``TASK_TYPES``):

* ``frontend``    - what a user sees and touches: web pages and components (HTML, CSS,
  React, Vue, Angular, Svelte, server templates), mobile and desktop UIs (React Native,
  Flutter, SwiftUI, Tkinter, Qt), editor and browser extensions, games and interactive
  graphics (Unity, Godot, pygame).
* ``backend``     - server-side application code: HTTP APIs and routes, web frameworks
  (Django, Flask, FastAPI, Express, Spring, ASP.NET, Laravel), databases and SQL, auth,
  bots and service integrations.
* ``data_ml``     - data analysis and machine learning: dataframes, numeric arrays,
  plots, notebooks, training and inference, LLM/agent pipelines, computer vision.
* ``algorithmic`` - self-contained algorithms and data structures, exercises and
  competitive programming (sorting, trees, lists, graphs, DP, stdin in / stdout out,
  Advent of Code, LeetCode).
* ``systems``     - close to the machine or to operations: OS and kernel code, embedded
  and hardware I/O, concurrency primitives, shell/PowerShell scripts, build, CI,
  container and infrastructure files, file-system and process automation.
* ``other``       - prose, documentation, LaTeX, data literals, trivial snippets, or not
  enough evidence for any of the above.

Replacing it: the classifier is one implementation of ``TaskTypeClassifier`` (a callable
taking keyword arguments ``programming_language``, ``prefix`` and ``suffix`` and returning
one of ``TASK_TYPES``). An LLM labeller implementing the same call can be passed to
``label_context(task_classifier=...)``; bump ``VERSION`` (or use a new one) when it is.

Cost: features are computed on at most ``HEAD_WINDOW + TAIL_WINDOW`` characters of the
prefix and ``SUFFIX_WINDOW`` of the suffix (imports live at the top of a file, the task
near the cursor), so a 100 KB context costs the same as a 20 KB one (docs/performance.md,
"Measured by hand"). Regular expressions are avoided on purpose: a Python regex without a
literal first character scans the whole window, while a literal substring test or a set
lookup is far cheaper.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Literal, Protocol

# Bump whenever RULES, MIN_SCORE or the feature extraction changes.
VERSION = "1"

TASK_TYPES: tuple[str, ...] = ("frontend", "backend", "data_ml", "algorithmic", "systems", "other")

MIN_SCORE = 2.0
"""A label needs at least this total to win; below it the answer is ``"other"``."""

HEAD_WINDOW = 8_000
TAIL_WINDOW = 8_000
SUFFIX_WINDOW = 4_000


class TaskTypeClassifier(Protocol):
    """Anything that labels a context with one of ``TASK_TYPES``."""

    def __call__(self, *, programming_language: str, prefix: str, suffix: str) -> str: ...


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
        assert self.pattern is not None
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


# Import-like statements across languages; group 1 is a module name or a comma list.
# They only run on lines that contain an import keyword (see _has_import_keyword).
_IMPORT_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Python: from x.y import z / import x, y  (also Java/Kotlin/Scala: import a.b.C)
    re.compile(r"^from[ \t]+([\w.]+)[ \t]+import\b"),
    re.compile(
        r"^import[ \t]+(?:static[ \t]+)?"
        r"([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)"
    ),
    # JS/TS/Dart/Go: import ... from 'x' / } from 'x' / import 'x' / require('x') / import('x')
    re.compile(r"""\bfrom[ \t]*['"]([^'"\n]+)['"]"""),
    re.compile(r"""^import[ \t]*\(?[ \t]*['"]([^'"\n]+)['"]"""),
    re.compile(r"""\brequire(?:_relative)?[ \t]*\(?[ \t]*['"]([^'"\n]+)['"]"""),
    # C/C++: #include <x> / "x"
    re.compile(r"""^#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]"""),
    # C#/Julia: using A.B; / using X, Y
    re.compile(r"^using[ \t]+(?:static[ \t]+)?([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)"),
    # Rust/PHP/Elixir: use a::b / use App\Models\X / use Phoenix.Controller
    re.compile(r"^(?:pub(?:\([\w ]+\))?[ \t]+)?use[ \t]+([\w:\\.]+)"),
    re.compile(r"^extern[ \t]+crate[ \t]+(\w+)"),
    # R: library(x) / require(x)
    re.compile(r"\b(?:library|require)\([ \t]*['\"]?([\w.]+)"),
)
_GO_IMPORT_BLOCK = re.compile(r"import[ \t]*\(([^)]*)\)")
_QUOTED = re.compile(r"""["'`]([^"'`\n]+)["'`]""")
_SEPARATORS = re.compile(r"[./:\\]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _module_names(raw: str) -> set[str]:
    """``raw`` and its parent packages, lower-cased; relative imports only as written."""
    name = raw.strip().strip(";").lower()
    if name.startswith("package:"):
        name = name[len("package:") :]
    name = name.rstrip(":\\.")
    if not name:
        return set()
    if name.startswith((".", "/", "~", "@/")):
        return {name}
    names = {name}
    # Parent packages keep the original separators: "@angular/core" -> "@angular".
    for match in _SEPARATORS.finditer(name):
        if match.start() > 0:
            names.add(name[: match.start()])
    return names


def _imports_from_lines(lines: Iterable[str], text: str) -> frozenset[str]:
    """Modules named on the candidate ``lines``, plus Go ``import ( ... )`` blocks of ``text``."""
    modules: set[str] = set()
    for line in lines:
        for pattern in _IMPORT_PATTERNS:
            for match in pattern.finditer(line):
                for part in match.group(1).split(","):
                    words = part.split()
                    if words:
                        modules |= _module_names(words[0])
    if "import" in text:
        # Go lists one quoted path per line inside the block, with no keyword on the line.
        for block in _GO_IMPORT_BLOCK.finditer(text):
            for quoted in _QUOTED.finditer(block.group(1)):
                modules |= _module_names(quoted.group(1))
    return frozenset(modules)


def extract_imports(text: str) -> frozenset[str]:
    """Imported module names (and their parent packages) found in ``text``."""
    lines = (line.lstrip() for line in text.splitlines())
    return _imports_from_lines((line for line in lines if _has_import_keyword(line)), text)


def _has_import_keyword(line: str) -> bool:
    # Spelled out rather than any(...) over _IMPORT_KEYWORDS: this runs once per line and
    # the generator version is several times slower.
    return (
        "import" in line
        or "from" in line
        or "include" in line
        or "using" in line
        or "use " in line
        or "require" in line
        or "library(" in line
        or "crate" in line
    )


def _window(prefix: str, suffix: str) -> str:
    if len(prefix) > HEAD_WINDOW + TAIL_WINDOW:
        prefix = prefix[:HEAD_WINDOW] + "\n" + prefix[-TAIL_WINDOW:]
    return prefix + suffix[:SUFFIX_WINDOW]


def extract_features(*, programming_language: str, prefix: str, suffix: str) -> Features:
    """Reduce a context to the features the rules use (one pass over the lines)."""
    text = _window(prefix, suffix)
    heads: set[str] = set()
    import_lines: list[str] = []
    for line in text.splitlines():
        # split() also drops Unicode whitespace (U+00A0, U+3000, U+001F ...) that lstrip
        # keeps, so a line of only such characters has no head at all.
        stripped = line.lstrip(" \t-")
        head = stripped.split(None, 1)
        if not head:
            continue
        heads.add(head[0])
        if _has_import_keyword(stripped):
            import_lines.append(line.lstrip())
    return Features(
        language=programming_language,
        imports=_imports_from_lines(import_lines, text),
        words=frozenset(_IDENTIFIER.findall(text)),
        line_heads=frozenset(heads),
        text=text,
    )


@dataclass(frozen=True)
class TaskTypeExplanation:
    """The score table behind one decision."""

    label: str
    scores: dict[str, float]
    fired: tuple[tuple[str, str, float], ...] = field(default=())
    """(label, rule name, contribution) for every rule that added something."""


class RuleBasedTaskTypeClassifier:
    """The default ``TaskTypeClassifier``: a weighted rule table (see module docstring)."""

    def __init__(self, rules: Iterable[Rule] = RULES, *, min_score: float = MIN_SCORE) -> None:
        self.rules = tuple(rules)
        unknown = {rule.label for rule in self.rules} - set(TASK_TYPES)
        if unknown:
            raise ValueError(f"rules use unknown labels: {sorted(unknown)}")
        self.min_score = min_score
        self._index_rules()

    def _index_rules(self) -> None:
        """Lookup tables for `__call__`: value -> rules listing it, per kind.

        ``explain`` asks every rule in turn; most find nothing (a context names a handful
        of the ~1,100 listed values). `__call__` gets the same hits from the few values the
        features do contain: each present word, line head, import or language is looked up
        once, and only substring, pattern and import-prefix rules are asked themselves.
        Rules of other classes than `Rule` are always asked (their `hits` may differ).
        """
        self._words: dict[str, list[int]] = {}
        self._heads: dict[str, list[int]] = {}
        self._imports: dict[str, list[int]] = {}
        self._languages: dict[str, list[int]] = {}
        self._asked: list[int] = []  # substring, pattern, import prefixes, other classes
        tables = {
            "word": self._words,
            "line_head": self._heads,
            "import": self._imports,
            "language": self._languages,
        }
        for index, rule in enumerate(self.rules):
            table = tables.get(rule.kind) if type(rule) is Rule else None
            if table is None:
                self._asked.append(index)
                continue
            for value in rule._set:
                table.setdefault(value, []).append(index)
            if rule.kind == "import" and rule._prefixes:
                self._asked.append(index)  # its prefix part; the set part is indexed
        self._word_set = frozenset(self._words)
        self._head_set = frozenset(self._heads)
        self._import_set = frozenset(self._imports)

    def _hits(self, features: Features) -> dict[int, int]:
        """rule index -> hits, for the rules with any (what ``rule.hits`` gives each)."""
        hits: dict[int, int] = {}
        for present, table in (
            (features.words & self._word_set, self._words),
            (features.line_heads & self._head_set, self._heads),
            (features.imports & self._import_set, self._imports),
        ):
            for value in present:
                for index in table[value]:
                    hits[index] = hits.get(index, 0) + 1
        for index in self._languages.get(features.language, ()):
            hits[index] = hits.get(index, 0) + 1
        imports = features.imports
        text = features.text
        for index in self._asked:
            rule = self.rules[index]
            if type(rule) is not Rule:
                found = rule.hits(features)
            elif rule.kind == "import":
                prefixes = rule._prefixes
                found = sum(1 for module in imports if module.startswith(prefixes))
            elif rule.kind == "substring":
                # Counting stops at the cap: the score uses min(hits, cap).
                found, cap = 0, rule.cap
                for value in rule.values:
                    if value in text:
                        found += 1
                        if found >= cap:
                            break
            else:
                found = rule.hits(features)
            if found:
                hits[index] = hits.get(index, 0) + found
        return hits

    def explain(
        self, *, programming_language: str, prefix: str, suffix: str
    ) -> TaskTypeExplanation:
        """Label plus the per-label totals and every rule that fired."""
        features = extract_features(
            programming_language=programming_language, prefix=prefix, suffix=suffix
        )
        scores = dict.fromkeys(TASK_TYPES, 0.0)
        fired: list[tuple[str, str, float]] = []
        for rule in self.rules:
            hits = rule.hits(features)
            if hits:
                contribution = rule.weight * min(hits, rule.cap)
                scores[rule.label] += contribution
                fired.append((rule.label, rule.name, contribution))
        best = max(TASK_TYPES, key=scores.__getitem__)  # max keeps the first of equals
        label = best if scores[best] >= self.min_score else "other"
        return TaskTypeExplanation(label=label, scores=scores, fired=tuple(fired))

    def __call__(self, *, programming_language: str, prefix: str, suffix: str) -> str:
        """``explain(...).label``, from the indexed rules (see `_index_rules`): the same
        contributions added in the same order, so the same totals and the same label."""
        features = extract_features(
            programming_language=programming_language, prefix=prefix, suffix=suffix
        )
        scores = dict.fromkeys(TASK_TYPES, 0.0)
        rules = self.rules
        for index, hits in sorted(self._hits(features).items()):
            rule = rules[index]
            scores[rule.label] += rule.weight * min(hits, rule.cap)
        best = max(TASK_TYPES, key=scores.__getitem__)  # max keeps the first of equals
        return best if scores[best] >= self.min_score else "other"


default_task_type_classifier: TaskTypeClassifier = RuleBasedTaskTypeClassifier()


def classify_task_type(*, programming_language: str, prefix: str, suffix: str) -> str:
    """Task type of a context with the default rule-based classifier."""
    return default_task_type_classifier(
        programming_language=programming_language, prefix=prefix, suffix=suffix
    )
