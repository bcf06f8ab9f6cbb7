-- Whether a block that answered a request gave the item (`asked`), or only a block without
-- one (a session start's standing memory). A decision the session start listed among the
-- project's standing memory is told again, once, by the first prompt block whose request
-- names what it is about (memory/context.py). Rows from before, and rows an older replica
-- writes, count as asked: such an item is never given twice, as before.
ALTER TABLE injections ADD COLUMN asked INTEGER NOT NULL DEFAULT 1;
