"""The agent: model calls (``llm``) and the loop that runs tools between them."""
