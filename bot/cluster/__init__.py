"""Several `bot run` processes on one PostgreSQL store as one bot: leases on the
server's clock with fencing tokens (see ARCHITECTURE.md, "Replicas")."""
