import WeftCore

/// The one error type of WeftSync: a code you can match and a message for people.
///
/// Input from a peer never traps: a garbage frame, a wrong token or a protocol violation becomes a
/// `SyncError`, is sent to the peer in an error frame when that still makes sense, and closes the
/// session.
///
/// ```swift
/// do {
///     _ = try decoder.nextFrame()
/// } catch let error as SyncError where error.code == .frameTooLarge {
///     log.warning("\(error)")
/// }
/// ```
public struct SyncError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a code that travels in error frames.
    public var code: SyncErrorCode
    /// A human-readable explanation.
    public var message: String
    /// True when the peer reported this error in an error frame (rather than this replica detecting it).
    public var raisedByPeer: Bool

    /// An error from its parts.
    ///
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: an explanation for people.
    ///   - raisedByPeer: true when the error arrived in the peer's error frame.
    public init(_ code: SyncErrorCode, _ message: String, raisedByPeer: Bool = false) {
        self.code = code
        self.message = message
        self.raisedByPeer = raisedByPeer
    }

    /// The code, then the message; prefixed with "peer reported" for an error from the peer. Control
    /// characters and line separators in the message are written as escapes (`\n`, `\u{1B}`): a peer
    /// chooses its name and its error frames' text, and the description goes to the log.
    public var description: String {
        (raisedByPeer ? "peer reported " : "") + "\(code): \(Self.escapingControlCharacters(message))"
    }

    /// `text` with each control character, line separator and paragraph separator written as an escape.
    static func escapingControlCharacters(_ text: String) -> String {
        let needsEscape = { (scalar: Unicode.Scalar) in
            scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
        }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                escaped.append(scalar)
                continue
            }
            let escape =
                switch scalar {
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                }
            escaped.append(contentsOf: escape.unicodeScalars)
        }
        return String(escaped)
    }

    /// A malformed frame, wrapping the core decoding error that found it.
    static func malformed(_ what: String, _ error: any Error) -> SyncError {
        SyncError(.malformedFrame, "\(what): \(error)")
    }
}

/// The code of a ``SyncError``. Codes travel in error frames as 16-bit numbers; codes unknown to this
/// build (from a newer peer) are kept as they are.
///
/// ```swift
/// SyncErrorCode(rawValue: 5) == .authenticationFailed   // true
/// ```
public struct SyncErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's number on the wire.
    public let rawValue: UInt16

    /// A code from its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bytes that do not form a valid frame or message.
    public static let malformedFrame = SyncErrorCode(rawValue: 1)
    /// A frame longer than the limit.
    public static let frameTooLarge = SyncErrorCode(rawValue: 2)
    /// A frame type this build does not know.
    public static let unknownMessage = SyncErrorCode(rawValue: 3)
    /// The peer speaks another protocol version.
    public static let unsupportedVersion = SyncErrorCode(rawValue: 4)
    /// The peer's proof did not match its token, or no token is known for it.
    public static let authenticationFailed = SyncErrorCode(rawValue: 5)
    /// A message that is not allowed in the session's current state.
    public static let unexpectedMessage = SyncErrorCode(rawValue: 6)
    /// The peer uses this replica's own id: a copied database, or a connection to itself.
    public static let duplicateReplica = SyncErrorCode(rawValue: 7)
    /// The two roles cannot talk (two clients, or a replica connecting as a hub's client).
    public static let roleMismatch = SyncErrorCode(rawValue: 8)
    /// The peer went beyond a limit (window, pending requests, watches, snapshot size).
    public static let limitExceeded = SyncErrorCode(rawValue: 9)
    /// Nothing arrived within the idle or handshake timeout.
    public static let timeout = SyncErrorCode(rawValue: 10)
    /// The peer's stamps run too far ahead of the local clock.
    public static let clockDrift = SyncErrorCode(rawValue: 11)
    /// A received snapshot does not match its announced size or digest.
    public static let snapshotMismatch = SyncErrorCode(rawValue: 12)
    /// Ops out of order, with a gap, or otherwise against the protocol's rules.
    public static let protocolViolation = SyncErrorCode(rawValue: 13)
    /// The replica is shutting down or leaving.
    public static let shutdown = SyncErrorCode(rawValue: 14)
    /// The transport closed without an error frame.
    public static let connectionLost = SyncErrorCode(rawValue: 15)
    /// A session configuration or token is invalid (raised locally, never sent).
    public static let invalidConfiguration = SyncErrorCode(rawValue: 16)
    /// A client request failed (bad path, rejected write, permission).
    public static let requestFailed = SyncErrorCode(rawValue: 17)
    /// The local log could not be read (sent to the peer as a plain failure to continue).
    public static let localFailure = SyncErrorCode(rawValue: 18)
    /// The peer's credential does not allow this read or write.
    public static let permissionDenied = SyncErrorCode(rawValue: 19)
    /// The sender stamped its own ops again after installing a snapshot: the session ends so that
    /// both sides say anew, in fresh hellos, which ops they hold (the connection is dialled again).
    public static let resync = SyncErrorCode(rawValue: 20)
    /// The receiver is at a limit of its own, not of this session: too many connections, or too many
    /// bytes held for connections that have not authenticated. Try again later.
    public static let busy = SyncErrorCode(rawValue: 21)

    static let names: [UInt16: String] = [
        1: "malformedFrame", 2: "frameTooLarge", 3: "unknownMessage", 4: "unsupportedVersion",
        5: "authenticationFailed", 6: "unexpectedMessage", 7: "duplicateReplica", 8: "roleMismatch",
        9: "limitExceeded", 10: "timeout", 11: "clockDrift", 12: "snapshotMismatch", 13: "protocolViolation",
        14: "shutdown", 15: "connectionLost", 16: "invalidConfiguration", 17: "requestFailed", 18: "localFailure",
        19: "permissionDenied", 20: "resync", 21: "busy",
    ]

    /// The code's name, or `error <number>` for a code this build does not know.
    public var description: String { SyncErrorCode.names[rawValue] ?? "error \(rawValue)" }
}
