"""HTTP API: FastAPI app, agentmemory-compatible routes, auth and limits."""
