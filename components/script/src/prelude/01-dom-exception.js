  // ---------------------------------------------------------------------------------------
  // DOMException (https://webidl.spec.whatwg.org/#idl-DOMException)
  const LEGACY_CODES = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
    QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };
  const exceptionData = new WeakMap();
  class DOMException extends Error {
    constructor(message = "", name = "Error") {
      super(String(message));
      exceptionData.set(this, { name: String(name), message: String(message) });
      delete this.message;
    }
    get name() { return exceptionData.get(this).name; }
    get message() { return exceptionData.get(this).message; }
    get code() { return LEGACY_CODES[exceptionData.get(this).name] || 0; }
  }
  const CONSTANTS = ["INDEX_SIZE_ERR", 1, "DOMSTRING_SIZE_ERR", 2, "HIERARCHY_REQUEST_ERR", 3,
    "WRONG_DOCUMENT_ERR", 4, "INVALID_CHARACTER_ERR", 5, "NO_DATA_ALLOWED_ERR", 6,
    "NO_MODIFICATION_ALLOWED_ERR", 7, "NOT_FOUND_ERR", 8, "NOT_SUPPORTED_ERR", 9,
    "INUSE_ATTRIBUTE_ERR", 10, "INVALID_STATE_ERR", 11, "SYNTAX_ERR", 12,
    "INVALID_MODIFICATION_ERR", 13, "NAMESPACE_ERR", 14, "INVALID_ACCESS_ERR", 15,
    "VALIDATION_ERR", 16, "TYPE_MISMATCH_ERR", 17, "SECURITY_ERR", 18, "NETWORK_ERR", 19,
    "ABORT_ERR", 20, "URL_MISMATCH_ERR", 21, "QUOTA_EXCEEDED_ERR", 22, "TIMEOUT_ERR", 23,
    "INVALID_NODE_TYPE_ERR", 24, "DATA_CLONE_ERR", 25];
  for (let i = 0; i < CONSTANTS.length; i += 2) {
    for (const target of [DOMException, DOMException.prototype]) {
      Object.defineProperty(target, CONSTANTS[i], { value: CONSTANTS[i + 1], enumerable: true });
    }
  }
  tag(DOMException, "DOMException");

