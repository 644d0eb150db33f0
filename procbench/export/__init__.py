"""Exporting to the Hugging Face ecosystem: a task as an ``evaluate`` metric module, the board as a Hub dataset."""
