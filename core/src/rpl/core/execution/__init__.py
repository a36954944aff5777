"""The server: sessions, statement execution, start-up, recovery and shutdown."""
