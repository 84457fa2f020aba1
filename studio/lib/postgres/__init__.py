"""Django's PostgreSQL backend, with timestamps read by psycopg's compiled loader (base.py)."""
