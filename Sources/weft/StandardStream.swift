import Foundation

/// Standard output and error written without Foundation's `FileHandle.write`, which traps when the reader
/// has gone (SIGPIPE is ignored for the sockets' sake, so the write fails with EPIPE instead of ending the
/// process).
enum StandardStream {
    /// Writes all of `text` to `descriptor`; nil when done, else the `errno` of the write that failed
    /// (`EPIPE`: its reader went away).
    static func emit(_ text: String, to descriptor: Int32 = STDOUT_FILENO) -> Int32? {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return write(descriptor, base + offset, buffer.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            offset += written
        }
        return nil
    }

    /// The failure of a command whose result could not be written.
    static func failure(_ error: Int32) -> ClientFailure {
        ClientFailure(
            code: .requestFailed, "cannot write to standard output: \(String(cString: strerror(error)))")
    }
}

extension StandardStream {
    /// Opens /dev/null on each of standard input, output and error that was closed: the next descriptor
    /// the process opened (a socket, the event loop's) took the closed one's number, and what was written
    /// to standard output went there.
    static func openClosedOnes() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            guard fcntl(descriptor, F_GETFD) == -1, errno == EBADF else { continue }
            // The lowest free number: this one, the ones below being open now.
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0, opened != descriptor { close(opened) }
        }
    }
}
