"""The model catalogue, rating snapshots and the public leaderboard."""
