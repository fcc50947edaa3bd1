-- wrk script for benchmarks/bench_ingest.py: posts votes with unique pair ids.
--
--   wrk -s ingest.lua URL -- <mode> <tag> <api key or -> [batch size]
--
-- mode: battle       POST /api/v1/battles, no code fields (Private)
--       battle_code  POST /api/v1/battles with a ~2 KB prefix and ~2 KB suffix (Private)
--       extension    PUT  /add_completion_outcome, the extension's payload (Private)
--       batch        POST /api/v1/battles/batch with <batch size> battles per request
--
-- Pair ids are "<tag>-<thread>-<counter>[-<item>]": unique per run as long as the caller
-- gives every run its own tag. done() prints one line "WRKJSON {...}" with the counts and
-- latency percentiles (microseconds) that bench_ingest.py parses.

local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
  table.insert(threads, thread)
end

local MODELS = {
  "gpt-4o-2024-08-06", "codestral-2405", "deepseek-coder-fim", "claude-3-5-sonnet-20240620",
  "gemini-1.5-pro-002", "llama-3.1-405b-instruct", "gemini-1.5-flash-002",
  "qwen-2.5-coder-32b-instruct",
}
local OUTCOMES = { "model_a", "model_b", "model_a", "model_b", "tie", "both_bad" }

local function json_string(s)
  s = s:gsub('[%c"\\]', function(c)
    if c == "\n" then return "\\n" end
    if c == "\t" then return "\\t" end
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end)
  return '"' .. s .. '"'
end

-- A realistic Python file around the cursor, with English comments and docstrings, so the
-- labellers (language, natural language, task type, context length) all do real work.
local PREFIX_UNIT = [[
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)


@dataclass
class Invoice:
    """An invoice line read from the accounting export."""

    number: str
    customer: str
    amount_cents: int
    tags: list[str] = field(default_factory=list)


def load_invoices(path: Path) -> list[Invoice]:
    # Read the export written by the nightly job; skip lines that fail to parse
    # instead of aborting, but log them so that the finance team can fix the source.
    invoices = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            logger.warning("line %d is not valid JSON", lineno)
            continue
        invoices.append(Invoice(raw["number"], raw["customer"], int(raw["amount"])))
    return invoices
]]
local SUFFIX_UNIT = [[


def total_by_customer(invoices: list[Invoice]) -> dict[str, int]:
    """Sum the amounts of every customer, in cents, for the monthly report."""
    totals: dict[str, int] = {}
    for invoice in invoices:
        totals[invoice.customer] = totals.get(invoice.customer, 0) + invoice.amount_cents
    return totals


def main() -> None:
    # The report is printed as JSON so that the dashboard can read it directly.
    invoices = load_invoices(Path("invoices.jsonl"))
    print(json.dumps(total_by_customer(invoices), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
]]

local function repeat_to(unit, n)
  local parts, len = {}, 0
  while len < n do
    table.insert(parts, unit)
    len = len + #unit
  end
  return table.concat(parts):sub(1, n)
end

local PREFIX_J = json_string(repeat_to(PREFIX_UNIT, 2048) .. "\ndef overdue(invoices, today):\n    ")
local SUFFIX_J = json_string(repeat_to(SUFFIX_UNIT, 2048))
local COMPLETION_A_J = json_string("return [i for i in invoices if i.due < today]")
local COMPLETION_B_J = json_string("result = []\n    for i in invoices:\n        if i.due < today:\n            result.append(i)\n    return result")

local mode, tag, key, batch_size
local counter = 0
sent = 0 -- read by done() through thread:get

function init(args)
  mode = args[1] or "battle"
  tag = args[2] or "run"
  key = args[3] or "-"
  batch_size = tonumber(args[4] or "500")
  local headers = { ["Content-Type"] = "application/json" }
  if key ~= "-" and key ~= "" then
    headers["Authorization"] = "Bearer " .. key
  end
  wrk.headers = headers
  math.randomseed(tid * 7919 + os.time())
end

local function pick_pair(n)
  local a = (n % #MODELS) + 1
  local b = ((n + 1 + math.floor(n / #MODELS)) % #MODELS) + 1
  if a == b then b = (a % #MODELS) + 1 end
  return MODELS[a], MODELS[b]
end

local function battle_json(pair_id, n, with_code)
  local a, b = pick_pair(n)
  local parts = {
    '{"pair_id":"', pair_id,
    '","user_id":"machine-', tostring(n % 5000),
    '","privacy":"Private","model_a":"', a, '","model_b":"', b,
    '","outcome":"', OUTCOMES[(n % #OUTCOMES) + 1],
    '","kind":"completion","file_type":"python"',
    ',"latency_a_ms":', string.format("%.1f", 300 + (n * 37) % 1500),
    ',"latency_b_ms":', string.format("%.1f", 300 + (n * 53) % 1500),
    ',"client_version":"1.4.0"',
  }
  if with_code then
    table.insert(parts, ',"prefix":' .. PREFIX_J .. ',"suffix":' .. SUFFIX_J ..
      ',"completion_a":' .. COMPLETION_A_J .. ',"completion_b":' .. COMPLETION_B_J)
  end
  table.insert(parts, "}")
  return table.concat(parts)
end

local function extension_json(pair_id, n)
  local a, b = pick_pair(n)
  local user = "vscode-machine-" .. tostring(n % 5000)
  local function item(index, model)
    return table.concat({
      '{"completionId":"', pair_id, '-c', index, '","userId":"', user,
      '","timestamp":1732900000123,"prompt":"<CODE>def add(a, b):","completion":"',
      index == 0 and "    return a + b" or "    return sum([a, b])",
      '","model":"', model, '","pairCompletionId":"', pair_id, '-c', 1 - index,
      '","pairIndex":', index, ',"latency":', index == 0 and "0.84" or "1.31",
      ',"prefix":"def add(a, b):\\n","suffix":"\\n\\nprint(add(1, 2))\\n","version":"0.2.2"',
      ',"privacy":"Private","fileType":"python","username":""}',
    })
  end
  return table.concat({
    '{"pairId":"', pair_id, '","userId":"', user, '","completionItems":[',
    item(0, a), ",", item(1, b), '],"acceptedIndex":', n % 2,
    ',"version":"0.2.2","privacy":"Private","fileType":"python"}',
  })
end

function request()
  counter = counter + 1
  sent = counter
  local base = tag .. "-" .. tid .. "-" .. counter
  if mode == "battle" then
    return wrk.format("POST", "/api/v1/battles", nil, battle_json(base, counter, false))
  elseif mode == "battle_code" then
    return wrk.format("POST", "/api/v1/battles", nil, battle_json(base, counter, true))
  elseif mode == "extension" then
    return wrk.format("PUT", "/add_completion_outcome", nil, extension_json(base, counter))
  elseif mode == "batch" then
    local items = {}
    for i = 1, batch_size do
      items[i] = battle_json(base .. "-" .. i, counter * batch_size + i, false)
    end
    return wrk.format("POST", "/api/v1/battles/batch", nil,
      '{"battles":[' .. table.concat(items, ",") .. "]}")
  end
  error("unknown mode " .. tostring(mode))
end

function done(summary, latency, requests)
  local total_sent = 0
  for _, t in ipairs(threads) do
    total_sent = total_sent + (t:get("sent") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"duration_us":%d,"requests":%d,"bytes":%d,"non2xx":%d,"connect":%d,' ..
    '"read":%d,"write":%d,"timeout":%d,"sent":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"max_us":%d,"mean_us":%.1f}\n',
    summary.duration, summary.requests, summary.bytes, e.status, e.connect, e.read, e.write,
    e.timeout, total_sent, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean))
end
