"""Test kit: real server processes for tests, fixtures and fault harnesses."""
