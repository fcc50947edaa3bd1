"""External leaderboards (LiveBench, BigCodeBench, LiveCodeBench, Chatbot Arena, EvalPlus,
CodeArena-style win rates), the alias table mapping their model names to the catalogue, and
the correlations between those scores and the arena's ratings, stored per snapshot."""
