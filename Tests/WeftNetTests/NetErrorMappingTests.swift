import CLibUV
import Testing

@testable import WeftNet

@Suite(.timeLimit(.minutes(5))) struct NetErrorMappingTests {
    @Test func libuvStatusesMapToTypedCodesWithTheirText() {
        let error = NetError(uvStatus: UV_EADDRINUSE.rawValue, context: "bind 127.0.0.1:7700")
        #expect(error.code == .addressInUse)
        #expect(error.description == "bind 127.0.0.1:7700: address already in use")
        #expect(NetError(uvStatus: UV_ECONNREFUSED.rawValue, context: "c").code == .connectionRefused)
        #expect(NetError(uvStatus: UV_ECONNRESET.rawValue, context: "c").code == .connectionReset)
        #expect(NetError(uvStatus: UV_EPIPE.rawValue, context: "c").code == .connectionReset)
        #expect(NetError(uvStatus: UV_ETIMEDOUT.rawValue, context: "c").code == .timedOut)
        #expect(NetError(uvStatus: UV_EHOSTUNREACH.rawValue, context: "c").code == .unreachable)
        #expect(NetError(uvStatus: UV_EAI_NONAME.rawValue, context: "c").code == .hostNotFound)
        #expect(NetError(uvStatus: UV_EMFILE.rawValue, context: "c").code == .resourceExhausted)
        #expect(NetError(uvStatus: UV_EACCES.rawValue, context: "c").code == .permissionDenied)
        #expect(NetError(uvStatus: UV_EINVAL.rawValue, context: "c").code == .invalidArgument)
    }

    @Test func anUnnamedStatusIsASystemErrorThatKeepsItsText() {
        let error = NetError(uvStatus: UV_EROFS.rawValue, context: "write")
        #expect(error.code == .system)
        #expect(error.reason == "read-only file system")
    }
}
