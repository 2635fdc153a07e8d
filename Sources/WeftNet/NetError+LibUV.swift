import CLibUV

// MARK: - Mapping libuv status codes

extension NetError {
    /// Maps a negative libuv status to a typed error, keeping `uv_strerror`'s text as the reason.
    ///
    /// - Parameters:
    ///   - status: a negative value returned by a libuv call or passed to a libuv callback.
    ///   - context: what was being done, for example `"connect 127.0.0.1:7700"`.
    init(uvStatus status: Int32, context: String) {
        self.init(Self.code(forUVStatus: status), context: context, reason: Self.reason(forUVStatus: status))
    }

    /// The text libuv gives for a status, or a fallback when it has none.
    static func reason(forUVStatus status: Int32) -> String {
        guard let text = uv_strerror(status) else { return "libuv error \(status)" }
        return String(cString: text)
    }

    /// The code for a libuv status; anything not named here is ``Code/system``.
    static func code(forUVStatus status: Int32) -> Code {
        switch status {
        case UV_EADDRINUSE.rawValue: return .addressInUse
        case UV_EADDRNOTAVAIL.rawValue: return .addressUnavailable
        case UV_EACCES.rawValue, UV_EPERM.rawValue: return .permissionDenied
        case UV_EINVAL.rawValue: return .invalidArgument
        case UV_EAFNOSUPPORT.rawValue, UV_EAI_FAMILY.rawValue: return .invalidAddress
        case UV_EAI_NONAME.rawValue, UV_EAI_NODATA.rawValue, UV_EAI_AGAIN.rawValue, UV_EAI_FAIL.rawValue:
            return .hostNotFound
        case UV_ECONNREFUSED.rawValue: return .connectionRefused
        case UV_ECONNRESET.rawValue, UV_EPIPE.rawValue, UV_ECONNABORTED.rawValue, UV_ENOTCONN.rawValue:
            return .connectionReset
        case UV_ENETUNREACH.rawValue, UV_EHOSTUNREACH.rawValue, UV_ENETDOWN.rawValue, UV_EHOSTDOWN.rawValue:
            return .unreachable
        case UV_ETIMEDOUT.rawValue: return .timedOut
        case UV_EMFILE.rawValue, UV_ENFILE.rawValue, UV_ENOMEM.rawValue, UV_ENOBUFS.rawValue,
            UV_EAI_MEMORY.rawValue:
            return .resourceExhausted
        case UV_ECANCELED.rawValue, UV_EAI_CANCELED.rawValue: return .notOpen
        default: return .system
        }
    }
}
