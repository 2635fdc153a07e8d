import WeftCore

// Readable `description`s for the values an app prints while it learns the API: `print(receipt)` shows
// the write's stamp and status, not `Weft.WriteReceipt`.

// MARK: - WriteStatus

extension WriteStatus: CustomStringConvertible {
    /// `pending`, `durable`, `acknowledged`, `stable`, or `rejected(<why>)`.
    ///
    /// ```swift
    /// print(receipt.status)   // durable
    /// ```
    public var description: String {
        switch self {
        case .pending: return "pending"
        case .durable: return "durable"
        case .acknowledged: return "acknowledged"
        case .stable: return "stable"
        case .rejected(let rejection): return "rejected(\(rejection))"
        }
    }
}

// MARK: - WriteReceipt

extension WriteReceipt: CustomStringConvertible {
    /// The write's stamp and its status now.
    ///
    /// ```swift
    /// print(receipt)   // WriteReceipt(1732789200123.0@3f2a…, durable)
    /// ```
    public var description: String { "WriteReceipt(\(stamp), \(status))" }
}

// MARK: - TransactionResult

extension TransactionResult.AbortReason: CustomStringConvertible {
    /// `byClosure`, `retriesExhausted` or `overridden`.
    public var description: String {
        switch self {
        case .byClosure: return "byClosure"
        case .retriesExhausted: return "retriesExhausted"
        case .overridden: return "overridden"
        }
    }
}

extension TransactionResult: CustomStringConvertible {
    /// The outcome, the value and the number of attempts.
    ///
    /// ```swift
    /// print(result)   // committed value: 570 after 2 attempts, receipt WriteReceipt(…, stable)
    /// ```
    public var description: String {
        let attemptsText = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
        let outcome: String
        if case .aborted(let reason) = status {
            outcome = "aborted(\(reason))"
        } else if status == .committed {
            outcome = "committed"
        } else {
            outcome = "\(status)"
        }
        let receiptText = receipt.map { ", receipt \($0)" } ?? ""
        return "\(outcome) value: \(value) after \(attemptsText)\(receiptText)"
    }
}

// MARK: - DataEvent

extension DataEventType: CustomStringConvertible {
    /// `valueChange`, `childAddition`, `childChange` or `childRemoval`.
    public var description: String {
        switch self {
        case .valueChange: return "valueChange"
        case .childAddition: return "childAddition"
        case .childChange: return "childChange"
        case .childRemoval: return "childRemoval"
        }
    }
}

extension DataEvent.Source: CustomStringConvertible {
    /// `initial`, `localPending` or `merged`.
    public var description: String {
        switch self {
        case .initial: return "initial"
        case .localPending: return "localPending"
        case .merged: return "merged"
        }
    }
}

extension DataEvent: CustomStringConvertible {
    /// The type, the node, the value, the previous sibling (child events) and the source.
    ///
    /// ```swift
    /// print(event)   // childAddition /rooms/general/messages/-Nx… {"text":"hi"} after -Nw… (merged)
    /// ```
    public var description: String {
        let sibling = previousSiblingKey.map { " after \($0)" } ?? ""
        return "\(type) \(node.path) \(value)\(sibling) (\(source))"
    }
}

// MARK: - Sync status

extension SyncPeerStatus: CustomStringConvertible {
    /// The address, the direction, connected or not, the ops behind and the last error.
    ///
    /// ```swift
    /// print(peer)   // outbound 127.0.0.1:7700 connected, 0 ops behind
    /// ```
    public var description: String {
        var text = "\(direction.rawValue) \(address) \(isConnected ? "connected" : "not connected")"
        text += ", \(opsBehind) ops behind"
        if let lastError { text += ", last error: \(lastError)" }
        return text
    }
}

extension SyncDriverStatus: CustomStringConvertible {
    /// Where it listens and every peer, one per line.
    ///
    /// ```swift
    /// print(replica.syncStatus)
    /// ```
    public var description: String {
        var lines = [
            "listening on \(listeningAddress ?? "nothing"), \(connectedCount) of \(peers.count) peers connected"
        ]
        lines += peers.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }
}
