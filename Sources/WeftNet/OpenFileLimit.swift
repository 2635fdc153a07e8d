#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which bounds how many connections a
/// listener can hold. At the limit libuv accepts pending connections and closes them at once, without
/// telling the listener, so a listener keeps its own limit below the descriptors left.
///
/// ```swift
/// if let raised = OpenFileLimit.raiseToHard() { logger.info("open files: \(raised.from) → \(raised.to)") }
/// ```
public enum OpenFileLimit {
    /// Descriptors left for everything that is not an accepted connection: the database and its lock
    /// and log, the event loop's own, the standard streams, dialled peers.
    public static let reservedDescriptors = 128

    /// The soft limit now; nil when there is none (or it cannot be read).
    public static var soft: Int? {
        guard let limit = read(), limit.rlim_cur != unlimited else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one, as a daemon that serves many connections should (the
    /// usual soft limit, 1024, leaves room for fewer than ``NetLimits/connectionsMax``).
    /// - Returns: the limit before and after, when it changed; nil when it was already as high, or the
    ///   system refused.
    public static func raiseToHard() -> (from: Int, to: Int)? {
        guard var limit = read(), limit.rlim_cur < limit.rlim_max else { return nil }
        let before = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        guard write(limit) else { return nil }
        return (Int(clamping: before), limit.rlim_max == unlimited ? Int.max : Int(clamping: limit.rlim_max))
    }

    /// The most accepted connections the soft limit leaves room for, at most `wanted` and at least 1.
    public static func connectionsAllowed(wanted: Int) -> Int {
        guard let soft else { return wanted }
        return max(1, min(wanted, soft - reservedDescriptors))
    }

    /// `RLIM_INFINITY`, all ones (the C macro's cast does not import).
    private static let unlimited = rlim_t.max

    private static func read() -> rlimit? {
        var limit = rlimit()
        #if canImport(Glibc)
            let status = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
            let status = getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        return status == 0 ? limit : nil
    }

    private static func write(_ limit: rlimit) -> Bool {
        var limit = limit
        #if canImport(Glibc)
            return setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
        #else
            return setrlimit(RLIMIT_NOFILE, &limit) == 0
        #endif
    }
}
