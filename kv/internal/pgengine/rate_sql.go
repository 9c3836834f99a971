package pgengine

// rateDecideSQL is interviewd_rate_decide(k1, l1, k2, l2, win, t, rec): the strict
// sliding-window decision of the server's limiter (server/ratelimit, slidingLog),
// made in the database for a credential's key (k1, limit l1) and, unless k2 is null,
// its organisation's (k2, l2). Each key's log holds the times of its latest admissions,
// ascending. A request at t (clamped to no earlier than the newest admission, as the
// limiter clamps) fits a log when fewer than its limit admissions are less than win
// old; it is admitted when it fits both, and then, when rec, recorded in both. The
// logs are returned as they were before this request, with whether it was admitted:
// the node derives the headers from them exactly as on one node.
const rateDecideSQL = `CREATE OR REPLACE FUNCTION interviewd_rate_decide(
	k1 text, l1 integer, k2 text, l2 integer, win bigint, t bigint, rec boolean,
	OUT ts1 bigint[], OUT ts2 bigint[], OUT admitted boolean)
LANGUAGE plpgsql AS $$
DECLARE
	t1 bigint := t;
	t2 bigint := t;
BEGIN
	INSERT INTO interviewd_rate (key, ts, touched) VALUES (k1, '{}', t) ON CONFLICT (key) DO NOTHING;
	IF k2 IS NOT NULL THEN
		INSERT INTO interviewd_rate (key, ts, touched) VALUES (k2, '{}', t) ON CONFLICT (key) DO NOTHING;
	END IF;
	-- Both rows locked in key order, so two decisions never deadlock.
	PERFORM 1 FROM interviewd_rate WHERE key = k1 OR key = k2 ORDER BY key FOR UPDATE;
	SELECT r.ts INTO ts1 FROM interviewd_rate r WHERE r.key = k1;
	ts2 := '{}';
	IF k2 IS NOT NULL THEN
		SELECT r.ts INTO ts2 FROM interviewd_rate r WHERE r.key = k2;
	END IF;
	IF cardinality(ts1) > 0 THEN t1 := greatest(t, ts1[cardinality(ts1)]); END IF;
	IF cardinality(ts2) > 0 THEN t2 := greatest(t, ts2[cardinality(ts2)]); END IF;
	admitted := (cardinality(ts1) < l1 OR ts1[cardinality(ts1) - l1 + 1] + win - t1 <= 0)
		AND (k2 IS NULL OR cardinality(ts2) < l2 OR ts2[cardinality(ts2) - l2 + 1] + win - t2 <= 0);
	IF admitted AND rec THEN
		UPDATE interviewd_rate SET touched = t,
			ts = (SELECT coalesce(array_agg(v ORDER BY v), '{}') FROM (
				SELECT v FROM unnest(ts1 || t1) AS v WHERE t1 - v < win ORDER BY v DESC LIMIT l1) AS kept)
			WHERE key = k1;
		IF k2 IS NOT NULL THEN
			UPDATE interviewd_rate SET touched = t,
				ts = (SELECT coalesce(array_agg(v ORDER BY v), '{}') FROM (
					SELECT v FROM unnest(ts2 || t2) AS v WHERE t2 - v < win ORDER BY v DESC LIMIT l2) AS kept)
				WHERE key = k2;
		END IF;
	END IF;
END
$$`

// rateDecideFencedSQL is interviewd_rate_decide_fenced(k1, l1, k2, l2, win, t, rec, eb,
// ek, ev): interviewd_rate_decide made only if the credential epoch stored under bucket
// eb, key ek (an organisation's, in interviewd_kv) is still ev (NULL: no epoch stored
// yet). It returns the epoch it read and, when the epoch matched, the decision;
// otherwise admitted is NULL and nothing was recorded. A request's cached credential is
// thus checked in the same round trip as its rate decision (fence.go), and a
// credential changed since it was cached is never counted.
const rateDecideFencedCreateSQL = `CREATE OR REPLACE FUNCTION interviewd_rate_decide_fenced(
	k1 text, l1 integer, k2 text, l2 integer, win bigint, t bigint, rec boolean,
	eb text, ek bytea, ev bytea,
	OUT epoch bytea, OUT ts1 bigint[], OUT ts2 bigint[], OUT admitted boolean)
LANGUAGE plpgsql AS $$
BEGIN
	SELECT value INTO epoch FROM interviewd_kv WHERE bucket = eb AND key = ek;
	IF epoch IS DISTINCT FROM ev THEN
		RETURN;
	END IF;
	SELECT d.ts1, d.ts2, d.admitted INTO ts1, ts2, admitted FROM interviewd_rate_decide(k1, l1, k2, l2, win, t, rec) AS d;
END
$$`
