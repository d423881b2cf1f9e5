-- bot_fence(lease, owner, token): true when the lease is still this owner's under this
-- token and unexpired on the server's clock; otherwise it raises SQLSTATE BF001, which
-- aborts the statement (and its transaction) that called it, so nothing of a write
-- refused this way commits. FOR SHARE holds the lease row until that commit: a take-over
-- (an UPDATE of the row) waits for a write already checked. A write carries it as
-- "(SELECT bot_fence($n, $m, $k))" in its WHERE: one round trip, no transaction around it.
CREATE FUNCTION bot_fence(lease TEXT, holder TEXT, held_token BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM 1 FROM cluster_leases
    WHERE name = lease AND owner = holder AND token = held_token
      AND expires_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint
    FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'fenced off: % moved on from token %', lease, held_token
            USING ERRCODE = 'BF001';
    END IF;
    RETURN TRUE;
END
$$;
