"""Files users send (pictures, voice notes, documents) made into what the model can take,
and files the assistant sends back.

``intake`` runs before a turn stores the user's message: each attachment is checked
against the size cap, downloaded through its channel, kept under ``data/media/`` and
turned into an image the model sees, a description, a transcript or a document's text
(``vision``, ``transcribe``, ``reading``). The session row references a kept file by
path (``entries``); ``shown`` puts the images of the latest turns into the request as
data URLs right before each model call.
"""
