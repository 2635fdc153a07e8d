import CLibUV

/// Something the event loop owns a libuv handle for: a connection, a listener, a timer or a signal watcher.
///
/// The loop keeps every open resource in a registry (a strong reference from registration until the
/// handle's close callback) and closes them all when it shuts down. Every member is called on the loop
/// thread only.
protocol _LoopResource: AnyObject {
    /// Closes the resource because the loop is shutting down; owners hear ``NetError/Code/loopStopped``.
    func _closeForShutdown()
}

/// Views a libuv handle of any type as the generic `uv_handle_t` (libuv's handles share that prefix).
@inline(__always)
func _asHandle<Handle>(_ pointer: UnsafeMutablePointer<Handle>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutablePointer(OpaquePointer(pointer))
}

/// Views a TCP handle as the stream it extends.
@inline(__always)
func _asStream(_ pointer: UnsafeMutablePointer<uv_tcp_t>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutablePointer(OpaquePointer(pointer))
}
