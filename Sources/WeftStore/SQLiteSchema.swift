import GRDB

/// The SQLite schema of a Weft database, its migrations, and the SQL the store runs.
///
/// ```sql
/// -- (v3) The op log, keyed by origin and sequence: one B-tree, so that an insert updates one index
/// -- (v1 and v2 keyed it by stamp, with a second unique index on origin and sequence). The stamp is its
/// -- 16 big-endian bytes, whose order is stamp order. An origin's stamps grow with its sequence.
/// CREATE TABLE op (origin INTEGER, sequence INTEGER, stamp BLOB, status INTEGER, body BLOB,
///                  PRIMARY KEY (origin, sequence)) WITHOUT ROWID
/// -- The materialized tree: one row per scalar leaf, keyed by its path text.
/// CREATE TABLE node (path TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID
/// -- Where the compacted base differs from the tree: the base's subtree, whole.
/// CREATE TABLE base_override (path TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID
/// -- One row: who this replica is, its clock, its instance binding, the frontier and status watermarks.
/// CREATE TABLE identity (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), replica, clock, token, inode, …)
/// CREATE TABLE peer (replica INTEGER PRIMARY KEY, vector BLOB)
/// CREATE TABLE member (replica INTEGER PRIMARY KEY)
/// -- (v2) Which origins touched which paths through ops compaction folded into the base: per anchor
/// -- path and origin, the greatest sequence. The transaction rule needs them after a reopen.
/// CREATE TABLE compacted_touch (path TEXT, origin INTEGER, sequence INTEGER, PRIMARY KEY (path, origin)) WITHOUT ROWID
/// -- (v4) Query indexes: each one's collection and field, and its entries keyed by their sort key (whose
/// -- byte order is the index's order), so that an index reads back in order and a reopen does not rebuild it.
/// CREATE TABLE query_index (id INTEGER PRIMARY KEY, collection TEXT, field TEXT)
/// CREATE TABLE query_index_entry (index_id INTEGER, sort BLOB, key TEXT, value BLOB, PRIMARY KEY (index_id, sort)) WITHOUT ROWID
/// -- (v5) Webhook and notification subscriptions: each one's definition and delivery cursor, as values.
/// CREATE TABLE subscription (id TEXT PRIMARY KEY, definition BLOB, cursor BLOB) WITHOUT ROWID
/// ```
///
/// 64-bit unsigned values (replica ids, clock times, inodes) are stored as the signed integer with the
/// same bits.
enum SQLiteSchema {
    /// The schema version this code writes (`PRAGMA user_version`).
    static let version = 5
    /// `PRAGMA application_id` of every Weft database: "Weft" in ASCII.
    static let applicationID: Int32 = 0x5765_6674

    /// The migrator that creates and evolves the schema. Each migration ends by setting `user_version`.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE op (
                        stamp BLOB NOT NULL PRIMARY KEY,
                        origin INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        status INTEGER,
                        body BLOB NOT NULL
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX op_by_origin ON op (origin, sequence);
                    CREATE TABLE node (path TEXT NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
                    CREATE TABLE base_override (path TEXT NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
                    CREATE TABLE identity (
                        singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
                        replica INTEGER NOT NULL,
                        clock INTEGER NOT NULL,
                        token BLOB NOT NULL,
                        inode INTEGER NOT NULL,
                        frontier BLOB,
                        acknowledged_through INTEGER NOT NULL DEFAULT 0,
                        stable_through INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE peer (replica INTEGER NOT NULL PRIMARY KEY, vector BLOB NOT NULL);
                    CREATE TABLE member (replica INTEGER NOT NULL PRIMARY KEY);
                    PRAGMA application_id = \(applicationID);
                    PRAGMA user_version = 1;
                    """)
        }
        migrator.registerMigration("v2") { db in
            // Stores of v1 compacted without keeping touches; they start with none (see STORAGE.md).
            try db.execute(
                sql: """
                    CREATE TABLE compacted_touch (
                        path TEXT NOT NULL,
                        origin INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        PRIMARY KEY (path, origin)
                    ) WITHOUT ROWID;
                    PRAGMA user_version = 2;
                    """)
        }
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    CREATE TABLE op_v3 (
                        origin INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        stamp BLOB NOT NULL,
                        status INTEGER,
                        body BLOB NOT NULL,
                        PRIMARY KEY (origin, sequence)
                    ) WITHOUT ROWID;
                    INSERT INTO op_v3 (origin, sequence, stamp, status, body)
                        SELECT origin, sequence, stamp, status, body FROM op ORDER BY origin, sequence;
                    DROP TABLE op;
                    ALTER TABLE op_v3 RENAME TO op;
                    PRAGMA user_version = 3;
                    """)
        }
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: """
                    CREATE TABLE query_index (
                        id INTEGER NOT NULL PRIMARY KEY,
                        collection TEXT NOT NULL,
                        field TEXT NOT NULL
                    );
                    CREATE TABLE query_index_entry (
                        index_id INTEGER NOT NULL,
                        sort BLOB NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB NOT NULL,
                        PRIMARY KEY (index_id, sort)
                    ) WITHOUT ROWID;
                    PRAGMA user_version = 4;
                    """)
        }
        migrator.registerMigration("v5") { db in
            try db.execute(
                sql: """
                    CREATE TABLE subscription (
                        id TEXT NOT NULL PRIMARY KEY,
                        definition BLOB NOT NULL,
                        cursor BLOB NOT NULL
                    ) WITHOUT ROWID;
                    PRAGMA user_version = 5;
                    """)
        }
        return migrator
    }

    // MARK: - Statements

    /// A duplicate (same origin and sequence) changes nothing; the caller tells a repeat of the same op
    /// from a different op claiming the place (``selectStampAt``).
    static let insertOp = """
        INSERT INTO op (origin, sequence, stamp, status, body) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (origin, sequence) DO NOTHING
        """
    static let deleteOpAt = "DELETE FROM op WHERE origin = ? AND sequence = ?"
    static let selectStampAt = "SELECT stamp FROM op WHERE origin = ? AND sequence = ?"
    static let updateOpStatus = """
        UPDATE op SET status = ? WHERE origin = ? AND sequence = ? AND stamp = ? AND status IS NOT NULL
        """
    /// Reads every row (the key is not the stamp); compaction is rare and folds most of the log anyway.
    static let deleteOpsThrough = "DELETE FROM op WHERE stamp <= ?"
    static let selectOpsByOrigin = """
        SELECT stamp, status, body, origin, sequence FROM op WHERE origin = ? AND sequence > ? ORDER BY sequence LIMIT ?
        """
    static let selectOpsAfterPosition = """
        SELECT stamp, status, body, origin, sequence FROM op WHERE (origin, sequence) > (?, ?) ORDER BY origin, sequence LIMIT ?
        """
    static let selectOpsFirst = "SELECT stamp, status, body, origin, sequence FROM op ORDER BY origin, sequence LIMIT ?"
    static let selectAllOps = "SELECT stamp, status, body, origin, sequence FROM op"
    /// Reads the origin's rows: the stamp is not a key.
    static let selectOp = "SELECT stamp, status, body, origin, sequence FROM op WHERE origin = ? AND stamp = ?"
    static let selectOwnSequences = "SELECT sequence, stamp, status FROM op WHERE origin = ? AND status IS NOT NULL"
    static let countOps = "SELECT count(*) FROM op"

    static let insertNode = "INSERT INTO node (path, value) VALUES (?, ?)"
    static let upsertNode = """
        INSERT INTO node (path, value) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET value = excluded.value
        """
    static let deleteNode = "DELETE FROM node WHERE path = ?"
    static let deleteNodeRange = "DELETE FROM node WHERE path >= ? AND path < ?"
    static let selectNode = "SELECT path, value FROM node WHERE path = ?"
    static let selectNodeRange = "SELECT path, value FROM node WHERE path >= ? AND path < ? ORDER BY path"
    static let countNodes = "SELECT count(*) FROM node"
    static let selectNodesFirst = "SELECT path, value FROM node ORDER BY path LIMIT ?"
    static let selectNodesAfter = "SELECT path, value FROM node WHERE path > ? ORDER BY path LIMIT ?"

    static let anyOverride = "SELECT EXISTS (SELECT 1 FROM base_override)"
    static let upsertOverride = """
        INSERT INTO base_override (path, value) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET value = excluded.value
        """
    static let deleteOverride = "DELETE FROM base_override WHERE path = ?"
    static let deleteOverrideRange = "DELETE FROM base_override WHERE path >= ? AND path < ?"
    static let selectOverride = "SELECT path, value FROM base_override WHERE path = ?"
    static let selectOverrideRange = "SELECT path, value FROM base_override WHERE path >= ? AND path < ? ORDER BY path"

    static let selectIdentity = """
        SELECT replica, clock, token, inode, frontier, acknowledged_through, stable_through FROM identity
        """
    static let insertIdentity = """
        INSERT INTO identity (singleton, replica, clock, token, inode) VALUES (1, ?, ?, ?, ?)
        """
    static let updateIdentity = """
        UPDATE identity SET replica = ?, clock = ?, token = ?, inode = ?, frontier = ?, acknowledged_through = ?,
            stable_through = ?
        """
    static let updateProgress = """
        UPDATE identity SET clock = ?, frontier = ?, acknowledged_through = ?, stable_through = ?
        """
    static let upsertPeer = """
        INSERT INTO peer (replica, vector) VALUES (?, ?) ON CONFLICT (replica) DO UPDATE SET vector = excluded.vector
        """
    static let selectPeers = "SELECT replica, vector FROM peer"
    static let deleteMembers = "DELETE FROM member"
    static let insertMember = "INSERT OR IGNORE INTO member (replica) VALUES (?)"
    static let selectMembers = "SELECT replica FROM member"
    /// Keeps the greater sequence, compared as unsigned 64-bit values stored in signed columns: of two
    /// values of the same sign the signed maximum; otherwise the negative one (the larger unsigned).
    static let upsertTouch = """
        INSERT INTO compacted_touch (path, origin, sequence) VALUES (?, ?, ?) ON CONFLICT (path, origin) DO UPDATE
            SET sequence = CASE
                WHEN (sequence < 0) = (excluded.sequence < 0) THEN max(sequence, excluded.sequence)
                WHEN excluded.sequence < 0 THEN excluded.sequence
                ELSE sequence
            END
        """
    static let insertQueryIndex = "INSERT INTO query_index (id, collection, field) VALUES (?, ?, ?)"
    static let deleteQueryIndex = "DELETE FROM query_index WHERE id = ?"
    static let deleteQueryIndexEntries = "DELETE FROM query_index_entry WHERE index_id = ?"
    static let upsertQueryIndexEntry = """
        INSERT INTO query_index_entry (index_id, sort, key, value) VALUES (?, ?, ?, ?)
            ON CONFLICT (index_id, sort) DO UPDATE SET key = excluded.key, value = excluded.value
        """
    static let deleteQueryIndexEntry = "DELETE FROM query_index_entry WHERE index_id = ? AND sort = ?"
    static let selectQueryIndexes = "SELECT id, collection, field FROM query_index ORDER BY id"
    static let selectQueryIndexEntries = "SELECT key, value FROM query_index_entry WHERE index_id = ? ORDER BY sort"
    static let selectSubscriptions = "SELECT id, definition, cursor FROM subscription ORDER BY id"
    static let upsertSubscription = """
        INSERT INTO subscription (id, definition, cursor) VALUES (?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, cursor = excluded.cursor
        """
    static let updateSubscriptionCursor = "UPDATE subscription SET cursor = ? WHERE id = ?"
    static let deleteSubscription = "DELETE FROM subscription WHERE id = ?"
    static let selectTouches = "SELECT path, origin, sequence FROM compacted_touch ORDER BY path, origin"
}
