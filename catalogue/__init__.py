"""The model catalogue: the LLMs that battle, their aliases and merges."""
