"""The vault: markdown files a person reads and edits in Obsidian.

Here live the session board (``memory/index.md``), session snapshots
(``memory/sessions/<id>.md``) and the archive (``memory/archive/<id>/``), with the file
locking and atomic writes that keep them whole when hooks, agents and people write at once.
Files are the truth; the store only mirrors them.
"""
