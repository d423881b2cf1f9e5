"""Streamed replies: the answer appears in the chat as the model writes it.

:mod:`.service` opens one :class:`.preview.PreviewStream` per agent turn in a chat whose
channel is ``SupportsPreview`` (and not turned off); the turn's model call feeds it
(:mod:`bot.agent.llm.stream`), and its finish hands the preview's message id to the final
answer, which goes through the outbox as every answer does and replaces the preview in
place. Previews themselves never touch the outbox or delivery's lanes.
"""
