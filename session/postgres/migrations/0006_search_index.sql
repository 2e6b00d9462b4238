-- Search that stays fast for the roles people use (issue 13).
--
-- Under Row-Level Security a role's own query may not use an index for an
-- operator that is not leakproof, and @@ is not: the messages' GIN index
-- was never used but by the schema's owner, and every search by a person's
-- role read the whole table. Search now runs in search_messages below, as
-- the schema's owner, and applies the sessions' read policy itself.
--
-- The index is built for recent-first search, as FTS5's doclists are read
-- newest first: search_vector adds to a message's lexemes
--   - its buckets, '# a<id / 1000>', '# b<id / 8000>' and '# c<id / 64000>',
--     so a search can ask the index for the matches among the newest few
--     thousand messages only (a range of ids is a handful of aligned
--     blocks; GIN reads only the parts of the words' posting lists the
--     blocks hold, led by the rarest lists);
--   - each word's first 1, 2 and 3 letters, '<prefix> *', for words longer
--     than that, so a prefix is one exact lookup instead of a merge of every
--     word that starts with it (FTS5's prefix='1 2 3').
-- Both kinds hold a space, which the parser never puts in a lexeme. The GIN
-- index has no pending list (fastupdate off): a message costs a little more
-- to store, and a search never reads an unsorted list. The tsvector itself
-- is compressed with LZ4 where the server has it: ranking reads it for
-- every match it ranks.

CREATE FUNCTION search_vector(tsv tsvector, id bigint) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE COST 1000
    SET search_path = pg_catalog AS $$
    SELECT tsv || array_to_tsvector(
        coalesce((SELECT array_agg(DISTINCT left(l, n) || ' *')
                  FROM unnest(tsvector_to_array(tsv)) l, generate_series(1, 3) n
                  WHERE n < length(l)), '{}') || ARRAY['# a' || (id / 1000)::text, '# b' || (id / 8000)::text, '# c' || (id / 64000)::text])
$$;

DO $$ BEGIN
    ALTER TABLE messages ALTER COLUMN content_tsv SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN NULL;
END $$;

DROP INDEX messages_content_tsv;
CREATE INDEX messages_search ON messages USING gin (search_vector(content_tsv, id)) WITH (fastupdate = off);

-- search_lexeme quotes a lexeme for tsquery input.
-- (No SET search_path, so that calls are inlined; it names pg_catalog's
-- functions and operators itself.)
CREATE FUNCTION search_lexeme(l text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT '''' OPERATOR(pg_catalog.||) pg_catalog.replace(pg_catalog.replace(l, '\', '\\'), '''', '''''') OPERATOR(pg_catalog.||) ''''
$$;

-- search_messages finds the messages whose content holds all of words (the
-- last one as a prefix) among the sessions the calling person may read,
-- ranks the newest win of them by query and returns the best lim.
--
-- It reads the buckets of the newest 4,000 to 5,000 messages first and
-- stops once it holds win matches; if not, the next read takes as many
-- older buckets as the matches so far say the rest of the window needs,
-- at least as many again as it has read and at most 64. When none matched
-- the word is likely rare: the next read takes its whole lists. Only the
-- newest matches a read needs are ranked. So a common word costs what the
-- newest few thousand messages cost, however large the table, and a rare
-- one two cheap index reads. A last word longer than three letters is
-- looked up by its first three letters and checked on the rows found.
--
-- The visibility test is the sessions_read policy's (0001_init.sql): keep
-- them the same.
CREATE FUNCTION search_messages(query tsquery, words text[], win integer, lim integer)
    RETURNS TABLE (id bigint, session_id text, role text, content text, rank real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, public
    SET max_parallel_workers_per_gather = 0 SET jit = off SET plan_cache_mode = force_custom_plan AS $$
DECLARE
    lexemes text[];
    n integer;
    last text;
    need text := '';
    filter tsquery;
    newest bigint;
    hi bigint;
    lo bigint;
    q tsquery;
    blocks text[];
    x bigint;
    ids bigint[] := '{}';
    ranks real[] := '{}';
    more_ids bigint[];
    more_ranks real[];
BEGIN
    SELECT array_agg(u.lexeme ORDER BY w.i, u.positions[1]) INTO lexemes
        FROM unnest(words) WITH ORDINALITY w(word, i), unnest(to_tsvector('ctxls', w.word)) u;
    n := coalesce(array_length(lexemes, 1), 0);
    IF n = 0 THEN
        RETURN;
    END IF;
    FOR k IN 1 .. n - 1 LOOP
        need := need || search_lexeme(lexemes[k]) || ' & ';
    END LOOP;
    last := lexemes[n];
    IF length(last) <= 3 THEN
        need := need || '(' || search_lexeme(last) || ' | ' || search_lexeme(last || ' *') || ')';
    ELSE
        need := need || search_lexeme(left(last, 3) || ' *');
        filter := (search_lexeme(last) || ':*')::tsquery;
    END IF;

    SELECT max(m.id) INTO newest FROM messages m;
    hi := newest / 1000;
    lo := greatest((newest - 4000) / 1000, 0);
    WHILE hi >= 0 LOOP
        -- the buckets lo..hi as aligned blocks of 64, 8 and 1, newest first
        blocks := '{}';
        x := hi + 1;
        WHILE x > lo AND cardinality(blocks) <= 32 LOOP
            IF x % 64 = 0 AND x - 64 >= lo THEN
                blocks := blocks || ('# c' || (x / 64 - 1)::text);
                x := x - 64;
            ELSIF x % 8 = 0 AND x - 8 >= lo THEN
                blocks := blocks || ('# b' || (x / 8 - 1)::text);
                x := x - 8;
            ELSE
                blocks := blocks || ('# a' || (x - 1)::text);
                x := x - 1;
            END IF;
        END LOOP;
        IF x > lo THEN
            q := need::tsquery;
        ELSE
            SELECT (need || ' & (' || string_agg(search_lexeme(b), ' | ') || ')')::tsquery INTO q
                FROM unnest(blocks) b;
        END IF;
        WITH hit AS MATERIALIZED (
            SELECT m.id, m.session_id, m.content_tsv FROM messages m
            WHERE search_vector(m.content_tsv, m.id) @@ q AND m.id < (hi + 1) * 1000),
        wanted AS (
            SELECT hit.id, hit.content_tsv FROM hit JOIN sessions s ON s.id = hit.session_id
            WHERE (filter IS NULL OR hit.content_tsv @@ filter)
              AND (s.owner = session_user OR s.visibility = 'team')
            ORDER BY hit.id DESC LIMIT win - cardinality(ids))
        SELECT array_agg(wanted.id), array_agg(ts_rank(wanted.content_tsv, query)) INTO more_ids, more_ranks
            FROM wanted;
        ids := ids || coalesce(more_ids, '{}');
        ranks := ranks || coalesce(more_ranks, '{}');
        EXIT WHEN cardinality(ids) >= win;
        hi := lo - 1;
        IF cardinality(ids) = 0 THEN
            lo := 0;
        ELSE
            -- as many buckets as the matches so far say the rest of the
            -- window needs, and 15% more; at least as many as were read
            -- (so that a sparse stretch is crossed in a few reads), at
            -- most 64
            lo := greatest(hi + 1 - least(64, greatest(newest / 1000 - hi,
                ceil(1.15 * (win - cardinality(ids)) * (newest - (hi + 1) * 1000 + 1) / cardinality(ids) / 1000)::bigint)), 0);
        END IF;
    END LOOP;

    RETURN QUERY
        SELECT m.id, m.session_id, m.role, m.content, best.rank
        FROM (SELECT u.id, u.rank FROM unnest(ids, ranks) u(id, rank)
              ORDER BY u.rank DESC, u.id DESC LIMIT lim) best
        JOIN messages m ON m.id = best.id
        ORDER BY best.rank DESC, best.id DESC;
END
$$;

REVOKE ALL ON FUNCTION search_messages(tsquery, text[], integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION search_messages(tsquery, text[], integer, integer) TO ctxls_user;
