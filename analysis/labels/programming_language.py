"""Programming-language slice label: the editor's ``fileType`` mapped to a canonical name.

The extension sends whatever the editor calls the document: a VS Code language id
("python", "typescriptreact", "shellscript"), a bare extension ("py", ".tsx", "h") or,
from some clients, a file name or path ("Dockerfile", "src/app/page.tsx"). This module
turns all of those into one lower-case canonical name from ``PROGRAMMING_LANGUAGES`` so
battles can be grouped; anything unknown, ``None`` or empty becomes ``"other"``.

Mapping choices worth knowing (they change which slice a battle lands in):

* Dialects and framework flavours fold into their language: ``typescriptreact`` and
  ``tsx`` are ``typescript``, ``javascriptreact``/``jsx`` are ``javascript``,
  ``objective-cpp`` is ``objective-c``, ``jupyter``/``ipynb`` are ``python``.
* Style sheets (CSS, SCSS, Sass, Less, Stylus) are all ``css``; server-side HTML
  template languages (Blade, Razor, Jinja, ERB, Handlebars, Pug...) are ``html``;
  Vue and Svelte single-file components keep their own names.
* Ambiguous extensions follow VS Code's defaults: ``.h`` is C, ``.m`` is Objective-C
  (MATLAB's extension reports ``matlab``), ``.pl`` is Perl, ``.v`` is Verilog.

The table covers the languages of the Stack Overflow 2024 survey's top 40 and the
config/markup formats developers edit most; extend ``_ALIASES`` to add more (a test
checks that no alias points at two languages).
"""

from __future__ import annotations

# Bump when the mapping changes in a way that moves existing battles between slices.
VERSION = "1"

OTHER = "other"

# canonical name -> every spelling that should map to it (VS Code language ids, file
# extensions without the dot, whole file names, and common names). All lower case.
# fmt: off
_ALIASES: dict[str, tuple[str, ...]] = {
    "python": ("python", "py", "pyw", "pyi", "pyx", "pxd", "ipynb", "jupyter", "python3",
               "py3", "micropython", "cython", "gyp"),
    "javascript": ("javascript", "javascriptreact", "js", "jsx", "mjs", "cjs", "node",
                   "ecmascript", "es6"),
    "typescript": ("typescript", "typescriptreact", "ts", "tsx", "mts", "cts"),
    "java": ("java", "jav"),
    "c": ("c", "h"),
    "cpp": ("cpp", "c++", "cc", "cxx", "hpp", "hh", "hxx", "h++", "ipp", "inl", "tpp",
            "ino", "arduino"),
    "csharp": ("csharp", "cs", "c#", "csx", "cake"),
    "go": ("go", "golang", "go.mod"),
    "rust": ("rust", "rs"),
    "php": ("php", "php3", "php4", "php5", "php7", "php8", "phtml"),
    "ruby": ("ruby", "rb", "rake", "gemspec", "rakefile", "gemfile", "ru"),
    "kotlin": ("kotlin", "kt", "kts"),
    "swift": ("swift",),
    "dart": ("dart",),
    "scala": ("scala", "sc", "sbt"),
    "r": ("r", "rmd", "rscript", "rprofile"),
    "julia": ("julia", "jl"),
    "matlab": ("matlab", "octave", "mlx"),
    "lua": ("lua", "luau"),
    "perl": ("perl", "pl", "pm", "pod"),
    "haskell": ("haskell", "hs", "lhs"),
    "elixir": ("elixir", "ex", "exs", "eex", "heex", "leex"),
    "erlang": ("erlang", "erl", "hrl"),
    "clojure": ("clojure", "clj", "cljs", "cljc", "edn"),
    "fsharp": ("fsharp", "fs", "fsi", "fsx", "f#"),
    "ocaml": ("ocaml", "ml", "mli", "reason", "re", "rei"),
    "objective-c": ("objective-c", "objective-cpp", "objc", "objcpp", "m", "mm"),
    "groovy": ("groovy", "gradle", "gvy", "jenkinsfile"),
    "visual-basic": ("vb", "vbnet", "vb.net", "visual-basic", "visualbasic", "vba", "vbs",
                     "vbscript", "bas"),
    "pascal": ("pascal", "pas", "dpr", "delphi", "objectpascal", "lpr", "pp"),
    "fortran": ("fortran", "fortran-modern", "fortranfreeform", "fortranfixedform",
                "fortran90", "f", "f77", "f90", "f95", "f03", "f08", "for"),
    "cobol": ("cobol", "cob", "cbl", "cpy"),
    "assembly": ("assembly", "asm", "s", "nasm", "masm", "gas", "arm", "asm-intel-x86-generic"),
    "zig": ("zig",),
    "nim": ("nim", "nims", "nimble"),
    "crystal": ("crystal", "cr"),
    "solidity": ("solidity", "sol"),
    "ada": ("ada", "adb", "ads"),
    "lisp": ("lisp", "commonlisp", "common-lisp", "lsp", "el", "elisp", "emacs-lisp",
             "scheme", "scm", "ss", "racket", "rkt"),
    "prolog": ("prolog", "plg"),
    "apex": ("apex", "trigger"),
    "gdscript": ("gdscript", "gd"),
    "powershell": ("powershell", "ps1", "psm1", "psd1", "pwsh"),
    "shell": ("shellscript", "shell", "sh", "bash", "zsh", "fish", "ksh", "csh", "tcsh",
              "bashrc", "zshrc", "bash_profile", "profile", "command"),
    "batch": ("bat", "batch", "cmd"),
    "sql": ("sql", "mysql", "pgsql", "postgres", "postgresql", "plsql", "tsql", "sqlite",
            "psql", "hql", "ddl", "prisma"),
    "html": ("html", "htm", "xhtml", "shtml", "jsp", "django-html", "jinja", "jinja-html",
             "jinja2", "j2", "handlebars", "hbs", "mustache", "razor", "cshtml",
             "aspnetcorerazor", "blade", "blade.php", "twig", "liquid", "erb", "html.erb",
             "ejs", "pug", "jade", "haml", "slim", "njk", "nunjucks", "astro", "vue-html"),
    "css": ("css", "scss", "sass", "less", "stylus", "styl", "postcss", "pcss",
            "tailwindcss"),
    "vue": ("vue",),
    "svelte": ("svelte",),
    "json": ("json", "jsonc", "json5", "jsonl", "jsonlines", "ndjson", "geojson",
             "code-workspace", "webmanifest"),
    "yaml": ("yaml", "yml", "dockercompose", "github-actions-workflow", "ansible", "helm",
             "azure-pipelines"),
    "toml": ("toml",),
    "xml": ("xml", "xsd", "xsl", "xslt", "svg", "plist", "csproj", "vbproj", "fsproj",
            "props", "targets", "resx", "xaml", "wsdl", "rss", "atom"),
    "markdown": ("markdown", "md", "mdx", "mkd", "mdown", "qmd", "quarto"),
    "latex": ("latex", "tex", "bibtex", "bib", "doctex", "sty", "ltx"),
    "dockerfile": ("dockerfile", "docker", "containerfile"),
    "makefile": ("makefile", "make", "mk", "mak", "gnumakefile"),
    "cmake": ("cmake", "cmakelists.txt"),
    "terraform": ("terraform", "tf", "tfvars", "hcl", "terraform-vars"),
    "graphql": ("graphql", "gql", "graphqls"),
    "protobuf": ("proto", "proto3", "protobuf"),
    "cuda": ("cuda", "cuda-cpp", "cu", "cuh"),
    "shader": ("shader", "shaderlab", "glsl", "hlsl", "wgsl", "vert", "frag", "geom",
               "tesc", "tese", "metal"),
    "verilog": ("verilog", "systemverilog", "v", "sv", "svh", "vh"),
    "vhdl": ("vhdl", "vhd"),
    "tcl": ("tcl",),
    "coffeescript": ("coffeescript", "coffee"),
    "elm": ("elm",),
    "nix": ("nix",),
    "d": ("d", "dlang"),
    "mojo": ("mojo",),
    "starlark": ("starlark", "bzl", "bazel", "build.bazel", "workspace"),
    "ini": ("ini", "cfg", "conf", "properties", "env", "dotenv", "editorconfig",
            "gitconfig", "npmrc"),
    "csv": ("csv", "tsv"),
    "plaintext": ("plaintext", "txt", "text", "log"),
}
# fmt: on

PROGRAMMING_LANGUAGES: tuple[str, ...] = (*_ALIASES, OTHER)
"""Every value ``normalize_language`` can return, ``"other"`` last."""


def _build_lookup() -> dict[str, str]:
    lookup: dict[str, str] = {}
    for canonical, aliases in _ALIASES.items():
        for alias in (canonical, *aliases):
            previous = lookup.setdefault(alias, canonical)
            if previous != canonical:
                raise ValueError(f"alias {alias!r} maps to both {previous!r} and {canonical!r}")
    return lookup


_LOOKUP: dict[str, str] = _build_lookup()

# File names that carry the language in their stem rather than their extension
# ("Dockerfile.dev", "Makefile.inc").
_STEM_LANGUAGES = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "makefile",
    "jenkinsfile": "groovy",
    "gemfile": "ruby",
    "rakefile": "ruby",
}


def normalize_language(file_type: str | None) -> str:
    """Canonical programming language for an editor ``fileType``; ``"other"`` if unknown.

    Accepts a VS Code language id, an extension with or without the dot, a file name or
    a path (either slash). Matching is case-insensitive. Never raises.
    """
    if not file_type:
        return OTHER
    value = file_type.strip().lower()
    if not value:
        return OTHER
    if value in _LOOKUP:
        return _LOOKUP[value]
    name = value.replace("\\", "/").rsplit("/", 1)[-1].lstrip(".")
    if name in _LOOKUP:
        return _LOOKUP[name]
    parts = name.split(".")
    # Longest compound extension first, so "page.blade.php" is a template, not PHP.
    for start in range(1, len(parts)):
        candidate = ".".join(parts[start:])
        if candidate in _LOOKUP:
            return _LOOKUP[candidate]
    return _STEM_LANGUAGES.get(parts[0], OTHER)
