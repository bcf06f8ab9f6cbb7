-- A search is asked in one project, and a request of only common words searches that
-- project's newest documents: found from the project's last id back, not the whole index's.
CREATE INDEX documents_project_newest ON documents (project, id);
