import CLibUV

/// A mutex over `uv_mutex_t`, for the little state WeftNet shares across threads.
///
/// It is `@unchecked Sendable` because the mutex itself is what makes sharing safe: the
/// `uv_mutex_t` lives at a stable heap address and is only touched through `uv_mutex_*`.
final class _Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<uv_mutex_t>

    /// Makes a lock; `uv_mutex_init` fails only when the process is out of resources.
    init() {
        mutex = .allocate(capacity: 1)
        let status = uv_mutex_init(mutex)
        // Out of memory for a mutex is not input from outside: there is no sane way to go on.
        precondition(status == 0, "uv_mutex_init failed: \(NetError.reason(forUVStatus: status))")
    }

    deinit {
        uv_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock.
    ///
    /// - Parameter body: work that reads or writes the shared state; it must not take this lock again.
    /// - Returns: what `body` returns.
    func withLock<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return try body()
    }
}
