"""Infrastructure, apart from the domain: reading settings from the environment, the
PostgreSQL backend and its statement deadline, the look-ups every request makes, the Redis connection
every request uses, client addresses, gunicorn's workers. Nothing here knows receipts
or merchants."""
