"""Contributors: optional accounts of extension users, their personal leaderboards, the top-contributors board."""
