/// Slows down failed authentications, per remote host: the answer to a failed handshake waits
/// ``SyncShellLimits/failedAuthenticationDelayMillisecondsBase`` after the first recent failure from that
/// host, twice as long after each further one, at most
/// ``SyncShellLimits/failedAuthenticationDelayMillisecondsMax``. A host is forgotten
/// ``SyncShellLimits/failedAuthenticationMemoryMilliseconds`` after its last failure, or when it
/// authenticates; the table holds at most ``SyncShellLimits/failedAuthenticationHostsMax`` hosts (the
/// one whose last failure is oldest goes first).
///
/// Sans-I/O: time is an argument (milliseconds on the driver's monotonic clock).
///
/// ```swift
/// let delay = throttle.failed(host: "203.0.113.7", now: now)   // 250, then 500, 1000, …
/// loop.scheduleTimer(after: delay) { answer() }
/// ```
struct AuthenticationThrottle {
    struct Record: Equatable {
        /// Failures since the host was last forgotten.
        var failures: Int
        /// When the last of them happened.
        var lastFailureAt: UInt64
    }

    let hostsMax: Int
    private(set) var records: [String: Record] = [:]

    init(hostsMax: Int = SyncShellLimits.failedAuthenticationHostsMax) {
        precondition(hostsMax >= 1, "the table holds at least one host")
        self.hostsMax = hostsMax
    }

    /// Records a failed authentication from `host`; returns how long to wait before answering it.
    mutating func failed(host: String, now: UInt64) -> UInt64 {
        var record = records[host]
        let memory = SyncShellLimits.failedAuthenticationMemoryMilliseconds
        if let last = record?.lastFailureAt, now >= last, now - last > memory { record = nil }
        if record == nil, records.count >= hostsMax { evictOldest() }
        var updated = record ?? Record(failures: 0, lastFailureAt: now)
        updated.failures = min(updated.failures + 1, 64)
        updated.lastFailureAt = max(updated.lastFailureAt, now)
        records[host] = updated
        precondition(records.count <= hostsMax, "the throttle table outgrew its limit")
        return Self.delay(afterFailures: updated.failures)
    }

    /// Forgets `host`: it proved a token.
    mutating func succeeded(host: String) {
        records[host] = nil
    }

    /// The wait after `failures` recent failures: the base, doubled for each failure after the first.
    static func delay(afterFailures failures: Int) -> UInt64 {
        precondition(failures >= 1, "a delay follows a failure")
        let base = SyncShellLimits.failedAuthenticationDelayMillisecondsBase
        let cap = SyncShellLimits.failedAuthenticationDelayMillisecondsMax
        let doublings = min(failures - 1, 32)
        return min(cap, base << doublings)
    }

    /// The host part of a `host:port` or `[v6]:port` address, which is what the table keys on (a
    /// stranger's every connection comes from another port).
    static func host(of address: String) -> String {
        guard let colon = address.lastIndex(of: ":") else { return address }
        let host = address[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { return String(host.dropFirst().dropLast()) }
        return String(host)
    }

    private mutating func evictOldest() {
        guard let oldest = records.min(by: { $0.value.lastFailureAt < $1.value.lastFailureAt })?.key else { return }
        records[oldest] = nil
    }
}
