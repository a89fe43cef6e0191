/** The SQLite schema, one entry per version (`PRAGMA user_version`). Append; never edit a released entry: stores have applied it. */
export const migrations: readonly string[] = [
  `CREATE TABLE users (
     name                     TEXT PRIMARY KEY,
     password_hash            TEXT NOT NULL,
     role                     TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
     created_at               INTEGER NOT NULL,
     refresh_token_hash       TEXT,
     refresh_token_expires_at INTEGER
   ) STRICT`,

  // timestamp_ms is the event time (ms); update_timestamp columns are write times in seconds.
  `CREATE TABLE events (
     event_no            INTEGER PRIMARY KEY,
     timestamp_ms        INTEGER NOT NULL,
     snr                 REAL NOT NULL,
     dm                  REAL,
     known_source_name   TEXT NOT NULL,
     tsar_classification TEXT,
     actions             TEXT NOT NULL,
     baseband_requested  INTEGER NOT NULL,
     update_timestamp    REAL NOT NULL
   ) STRICT;
   CREATE INDEX events_by_time ON events (timestamp_ms, event_no);
   CREATE INDEX events_by_source ON events (known_source_name, timestamp_ms, event_no);
   CREATE INDEX events_baseband_by_time ON events (timestamp_ms, event_no) WHERE baseband_requested = 1;

   CREATE TABLE traces (
     event_no INTEGER PRIMARY KEY,
     doc      TEXT NOT NULL
   ) STRICT;

   CREATE TABLE datatrail (
     event_no         INTEGER NOT NULL,
     member           TEXT NOT NULL,
     doc              TEXT NOT NULL,
     update_timestamp REAL NOT NULL,
     PRIMARY KEY (event_no, member)
   ) STRICT, WITHOUT ROWID;

   CREATE TABLE heartbeats (
     heartbeat_id     INTEGER PRIMARY KEY,
     event_no         INTEGER NOT NULL,
     doc              TEXT NOT NULL,
     update_timestamp REAL NOT NULL
   ) STRICT;
   CREATE INDEX heartbeats_by_event ON heartbeats (event_no, heartbeat_id);`,

  // The baseband-callback scan reads event_no, time, snr and source name: held by the index, no row is visited.
  `DROP INDEX events_baseband_by_time;
   CREATE INDEX events_baseband_covering ON events (timestamp_ms, event_no, snr, known_source_name)
     WHERE baseband_requested = 1;`,

  // Never keeps a row: /ready writes a page here to learn whether a write could be committed now.
  `CREATE TABLE write_probe (page BLOB NOT NULL) STRICT;`,

  // Every change update-trace makes: seq is the order of writing across every process (one writer at a time); AUTOINCREMENT never reuses one.
  `CREATE TABLE transitions (
     seq      INTEGER PRIMARY KEY AUTOINCREMENT,
     event_no INTEGER NOT NULL,
     key      TEXT NOT NULL,
     "from"   TEXT,
     "to"     TEXT NOT NULL,
     at       REAL NOT NULL,
     by       TEXT NOT NULL
   ) STRICT;
   CREATE INDEX transitions_by_event ON transitions (event_no, at, seq);`,

  // What the window routes send, JSON text made at each write (output-forms.ts), so a window read
  // joins stored text. For the sites `settings` names; a start remakes it (output-texts.ts).
  `ALTER TABLE events ADD COLUMN output TEXT;
   ALTER TABLE events ADD COLUMN callback_head TEXT;
   ALTER TABLE traces ADD COLUMN output TEXT;
   DROP INDEX events_baseband_covering;
   CREATE INDEX events_baseband_heads ON events (timestamp_ms, event_no, callback_head) WHERE baseband_requested = 1;
   CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;`,

  // event-status shows when an event's latest heartbeat was stored: one seek, not a read of every row of the event.
  `CREATE INDEX heartbeats_by_event_update ON heartbeats (event_no, update_timestamp);`,

  // The audit, kept: a row per event asking for baseband data with its facts (kept-facts.ts), what a
  // window read takes (kept-report.ts: the report, or the fixed audit) and the last look, updated in
  // each record write's transaction. `due_at`: when the next deadline of an incomplete stage passes.
  // Settings 'kept_audit_facts' and 'kept_audit_looks' say what the rows were made for.
  `CREATE TABLE audits (
     event_no   INTEGER PRIMARY KEY,
     facts      TEXT NOT NULL,
     report     TEXT,
     fixed      TEXT,
     event_time INTEGER NOT NULL,
     verdict    TEXT,
     due_at     INTEGER,
     stuck      TEXT NOT NULL
   ) STRICT;
   -- Covering: the window read takes each report (or fixed audit, whose verdict is the row's) from
   -- the index itself, in order, rather than from its row in the table (rows of a million events,
   -- the facts with them): a day's read was mostly the lookups of those rows.
   CREATE INDEX audits_by_time ON audits (event_time, event_no, verdict, report, fixed);
   CREATE INDEX audits_by_due ON audits (due_at) WHERE due_at IS NOT NULL;

   -- Every verdict change, written with the look that made it: the live stream reads them by seq.
   CREATE TABLE audit_changes (
     seq      INTEGER PRIMARY KEY AUTOINCREMENT,
     event_no INTEGER NOT NULL,
     message  TEXT NOT NULL
   ) STRICT;`,

  // One configuration per store (settings 'configuration'); each serving instance keeps a lease here with its own.
  `CREATE TABLE instances (
     id            TEXT PRIMARY KEY,
     host          TEXT NOT NULL,
     pid           INTEGER NOT NULL,
     configuration TEXT NOT NULL,
     renewed_at    INTEGER NOT NULL
   ) STRICT;`,

  // Bounded reads of an event's facts (event-records.ts): each site's newest finished and newest
  // erring heartbeat, and each audited key's first completion, one index seek each. The generated
  // columns say what heartbeatOutput would (json_valid first: a document that is not JSON counts as
  // neither, where json_extract would refuse every write of the row); the partial indexes hold only
  // the few rows that qualify.
  //
  // Writes the service did not make are marked (store.ts, dropOwnMarks), in the writer's own transaction.
  // One mark per event: a newer one replaces the older, so a mark made after a read has a seq beyond it.
  `ALTER TABLE heartbeats ADD COLUMN finished_site TEXT GENERATED ALWAYS AS (
     CASE WHEN json_valid(doc) AND json_type(doc, '$.site') = 'text' AND json_type(doc, '$.received.finished_time') = 'text'
          THEN json_extract(doc, '$.site') END) VIRTUAL;
   ALTER TABLE heartbeats ADD COLUMN erring_site TEXT GENERATED ALWAYS AS (
     CASE WHEN json_valid(doc) AND json_type(doc, '$.site') = 'text' AND json_type(doc, '$.sent.error') <> 'null'
               AND json_extract(doc, '$.sent.error') IS NOT ''
          THEN json_extract(doc, '$.site') END) VIRTUAL;
   CREATE INDEX heartbeats_finished ON heartbeats (event_no, finished_site, heartbeat_id) WHERE finished_site IS NOT NULL;
   CREATE INDEX heartbeats_erring ON heartbeats (event_no, erring_site, heartbeat_id) WHERE erring_site IS NOT NULL;
   CREATE INDEX transitions_completions ON transitions (event_no, key, at) WHERE "to" = 'complete';

   CREATE TABLE audit_marks (
     seq      INTEGER PRIMARY KEY AUTOINCREMENT,
     event_no INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX audit_marks_by_event ON audit_marks (event_no);
   CREATE TRIGGER audit_marks_newest AFTER INSERT ON audit_marks BEGIN
     DELETE FROM audit_marks WHERE event_no = new.event_no AND seq < new.seq;
   END;
   CREATE TRIGGER events_marked_insert AFTER INSERT ON events BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER events_marked_update AFTER UPDATE OF event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested ON events
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no), (new.event_no); END;
   CREATE TRIGGER events_marked_delete AFTER DELETE ON events BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   CREATE TRIGGER traces_marked_insert AFTER INSERT ON traces BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER traces_marked_update AFTER UPDATE OF event_no, doc ON traces
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no), (new.event_no); END;
   CREATE TRIGGER traces_marked_delete AFTER DELETE ON traces BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   CREATE TRIGGER datatrail_marked_insert AFTER INSERT ON datatrail BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER datatrail_marked_update AFTER UPDATE OF event_no, member, doc ON datatrail
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no), (new.event_no); END;
   CREATE TRIGGER datatrail_marked_delete AFTER DELETE ON datatrail BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   CREATE TRIGGER heartbeats_marked_insert AFTER INSERT ON heartbeats BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER heartbeats_marked_update AFTER UPDATE OF heartbeat_id, event_no, doc ON heartbeats
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no), (new.event_no); END;
   CREATE TRIGGER heartbeats_marked_delete AFTER DELETE ON heartbeats BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   CREATE TRIGGER transitions_marked_insert AFTER INSERT ON transitions BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER transitions_marked_update AFTER UPDATE OF event_no, key, "to", at ON transitions
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no), (new.event_no); END;
   CREATE TRIGGER transitions_marked_delete AFTER DELETE ON transitions BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;`,

  // The clock each kept look was made at: a look under a clock that has since moved back is found and made again.
  `ALTER TABLE audits ADD COLUMN looked_at INTEGER;
   CREATE INDEX audits_by_look_time ON audits (looked_at) WHERE looked_at IS NOT NULL;`,

  // Each event's heartbeat count, kept by triggers (an event may have millions), so every writer's
  // rows count in its transaction. A history keeps none: each update-trace would write it.
  `CREATE TABLE record_counts (
     event_no        INTEGER PRIMARY KEY,
     heartbeat_count INTEGER NOT NULL DEFAULT 0
   ) STRICT;
   INSERT INTO record_counts (event_no, heartbeat_count)
     SELECT event_no, n FROM (SELECT event_no, COUNT(*) AS n FROM heartbeats GROUP BY event_no) WHERE true;
   CREATE TRIGGER heartbeats_counted_insert AFTER INSERT ON heartbeats BEGIN
     INSERT INTO record_counts (event_no, heartbeat_count) VALUES (new.event_no, 1)
       ON CONFLICT (event_no) DO UPDATE SET heartbeat_count = heartbeat_count + 1;
   END;
   CREATE TRIGGER heartbeats_counted_delete AFTER DELETE ON heartbeats BEGIN
     UPDATE record_counts SET heartbeat_count = heartbeat_count - 1 WHERE event_no = old.event_no;
   END;
   CREATE TRIGGER heartbeats_counted_update AFTER UPDATE OF event_no ON heartbeats WHEN old.event_no IS NOT new.event_no BEGIN
     UPDATE record_counts SET heartbeat_count = heartbeat_count - 1 WHERE event_no = old.event_no;
     INSERT INTO record_counts (event_no, heartbeat_count) VALUES (new.event_no, 1)
       ON CONFLICT (event_no) DO UPDATE SET heartbeat_count = heartbeat_count + 1;
   END;`,

  // An update marks its event once (the old one too if the row moved): each mark is an insert our connection discards, and update-trace made two.
  `DROP TRIGGER events_marked_update;
   CREATE TRIGGER events_marked_update AFTER UPDATE OF event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested ON events
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER events_marked_moved AFTER UPDATE OF event_no ON events WHEN old.event_no IS NOT new.event_no
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   DROP TRIGGER traces_marked_update;
   CREATE TRIGGER traces_marked_update AFTER UPDATE OF event_no, doc ON traces
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER traces_marked_moved AFTER UPDATE OF event_no ON traces WHEN old.event_no IS NOT new.event_no
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   DROP TRIGGER datatrail_marked_update;
   CREATE TRIGGER datatrail_marked_update AFTER UPDATE OF event_no, member, doc ON datatrail
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER datatrail_marked_moved AFTER UPDATE OF event_no ON datatrail WHEN old.event_no IS NOT new.event_no
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   DROP TRIGGER heartbeats_marked_update;
   CREATE TRIGGER heartbeats_marked_update AFTER UPDATE OF heartbeat_id, event_no, doc ON heartbeats
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER heartbeats_marked_moved AFTER UPDATE OF event_no ON heartbeats WHEN old.event_no IS NOT new.event_no
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;
   DROP TRIGGER transitions_marked_update;
   CREATE TRIGGER transitions_marked_update AFTER UPDATE OF event_no, key, "to", at ON transitions
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   CREATE TRIGGER transitions_marked_moved AFTER UPDATE OF event_no ON transitions WHEN old.event_no IS NOT new.event_no
     BEGIN INSERT INTO audit_marks (event_no) VALUES (old.event_no); END;`,

  // Each key's first completion in a narrower index: the stage as a digit, then the site (`2kko`
  // for stages/baseband_conversion/sites/kko); the whole key took some 40 bytes and twice the WAL
  // pages at every commit (docs/performance.md, "Beside 53fdc3f"). Generated, so every writer's
  // rows are indexed alike; the digits are fixed, as completionOf (event-records.ts) writes them.
  `ALTER TABLE transitions ADD COLUMN completion TEXT GENERATED ALWAYS AS (
     CASE WHEN "to" IS NOT 'complete' THEN NULL
          WHEN key = 'stages/tsar_classification' THEN '0'
          WHEN substr(key, 1, 39) = 'stages/baseband_callback_request/sites/' THEN '1' || substr(key, 40)
          WHEN substr(key, 1, 33) = 'stages/baseband_conversion/sites/' THEN '2' || substr(key, 34)
          WHEN substr(key, 1, 31) = 'stages/data_registration/sites/' THEN '3' || substr(key, 32)
          WHEN substr(key, 1, 39) = 'stages/data_replication_to_minoc/sites/' THEN '4' || substr(key, 40)
     END) VIRTUAL;
   CREATE INDEX transitions_first_completions ON transitions (event_no, completion, at) WHERE completion IS NOT NULL;
   DROP INDEX transitions_completions;`,

  // Another program's edit of a kept output text marks its event as one of its records does, so the
  // marks check repairs it within a second; the verifier's pass of the texts is left for edits no
  // trigger saw. One trigger a table as before: the service's own writes fire no more of them.
  `DROP TRIGGER events_marked_update;
   CREATE TRIGGER events_marked_update
     AFTER UPDATE OF event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested, output, callback_head ON events
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;
   DROP TRIGGER traces_marked_update;
   CREATE TRIGGER traces_marked_update AFTER UPDATE OF event_no, doc, output ON traces
     BEGIN INSERT INTO audit_marks (event_no) VALUES (new.event_no); END;`
]
