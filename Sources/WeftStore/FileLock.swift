#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a database, held as a `flock` on the sidecar file `<database>.lock`, which
/// also records the pid of the holder so that a second opener can say who has it.
///
/// `flock` locks belong to an open file description: a second open in the same process conflicts as
/// well, and the lock goes away with the process, so a crash never leaves a stale lock.
final class FileLock {
    /// The lock file's path.
    let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Takes the lock of the database at `databasePath`.
    /// - Throws: ``StoreError/inUse(path:pid:)`` when another open file description holds it,
    ///   ``StoreError/readOnlyLocation(path:reason:)`` or ``StoreError/cannotOpen(path:reason:)`` when the
    ///   lock file cannot be created.
    static func acquire(databasePath: String) throws -> FileLock {
        let path = resolvingLinks(databasePath) + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw openError(errno, databasePath: databasePath) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = awaitPid(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK { throw StoreError.inUse(path: databasePath, pid: holder) }
            throw StoreError.io(path: databasePath, operation: "locking \(path)", message: FileStat.message(code))
        }
        let lock = FileLock(path: path, descriptor: descriptor)
        lock.writePid()
        return lock
    }

    /// The file's path with symbolic links resolved, so that every name of one database takes one lock
    /// file (through a link, a second opener took another and was stopped only by SQLite's lock, as
    /// busy); the path as given when the file does not exist yet.
    private static func resolvingLinks(_ databasePath: String) -> String {
        guard let resolved = realpath(databasePath, nil) else { return databasePath }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func openError(_ code: Int32, databasePath: String) -> StoreError {
        switch code {
        case EACCES, EPERM, EROFS:
            return .readOnlyLocation(
                path: databasePath, reason: "cannot create its lock file: \(FileStat.message(code))")
        case ENOENT:
            return .cannotOpen(path: databasePath, reason: "its directory does not exist")
        case ENOTDIR:
            return .cannotOpen(path: databasePath, reason: "a part of its path is not a directory")
        default:
            return .cannotOpen(path: databasePath, reason: "cannot create its lock file: \(FileStat.message(code))")
        }
    }

    /// The pid of the holder of the lock: the holder writes it just after it takes the lock, so an
    /// opener that lost a race may find the file empty for a moment; it reads again a few times (an
    /// empty pid made a second open in this process report "another process").
    private static func awaitPid(_ descriptor: Int32) -> Int32? {
        for _ in 0..<StoreLimits.lockFilePidReadsMax {
            if let pid = readPid(descriptor) { return pid }
            usleep(useconds_t(StoreLimits.lockFilePidReadPauseMicroseconds))
        }
        return readPid(descriptor)
    }

    /// The pid written in the lock file, if it holds one.
    private static func readPid(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: StoreLimits.lockFilePidBytesMax)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        return Int32(text.trimmingSpaces())
    }

    private func writePid() {
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// Clears the pid and releases the lock (the file stays: deleting it would race with another opener).
    func release() {
        guard descriptor >= 0 else { return }
        _ = ftruncate(descriptor, 0)
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

extension String {
    fileprivate func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[start...end]
    }
}

/// The few facts about files the store needs, from `stat`.
enum FileStat {
    /// The inode of the file at `path`.
    static func inode(_ path: String) throws -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw StoreError.io(path: path, operation: "reading the file's inode", message: message(errno))
        }
        return UInt64(info.st_ino)
    }

    /// The size of the file at `path`, 0 when it does not exist.
    static func size(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// What the file at `path` is when it exists and is not a regular file (following links); nil otherwise.
    static func irregularKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        default: return "not a regular file (a device, a pipe or a socket)"
        }
    }

    /// True when this process may write the file at `path` (false on a read-only file system).
    static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// The system's message for an `errno` value.
    static func message(_ code: Int32) -> String { String(cString: strerror(code)) }
}
