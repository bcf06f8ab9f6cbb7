"""Command line: `memvault serve | status | --version`, a thin layer over Memory and the API."""
