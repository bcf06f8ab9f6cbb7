-- A job's dedupe key holds only while it is pending: a request that comes while the same
-- job runs queues one more run, so what arrived meanwhile is not left out.
DROP INDEX jobs_live_dedupe;
CREATE UNIQUE INDEX jobs_pending_dedupe ON jobs (kind, dedupe_key) WHERE state = 'pending';

-- Finished jobs are pruned by age.
CREATE INDEX jobs_finished ON jobs (state, updated_at) WHERE state IN ('done', 'failed');
