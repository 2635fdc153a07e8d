import WeftCore
print("weft")
