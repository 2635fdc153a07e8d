import Testing
import Weft

@testable import weft

/// How a client command's failure becomes its exit code (Docs/CLI.md).
@Suite struct ClientFailureTests {
    /// A watch whose value outgrew a frame is closed by the daemon with an error frame, which arrives as
    /// "peer reported limitExceeded: …": it exited 3 (unreachable) where `get` of the same value exits 1.
    @Test func aRefusalTheDaemonSentInAnErrorFrameIsARequestFailure() async {
        for message in [
            "limitExceeded: read a smaller subtree",
            "peer reported limitExceeded: watch a smaller subtree",
            "requestFailed: no watch 3 on this session",
            "peer reported requestFailed: rejected",
        ] {
            #expect(ClientFailure(WeftError(.sync, message)).code == .requestFailed, "\(message)")
        }
        for message in ["connectionLost: the connection closed", "peer reported shutdown: the daemon stops"] {
            #expect(ClientFailure(WeftError(.sync, message)).code == .unreachable, "\(message)")
        }
    }
}
