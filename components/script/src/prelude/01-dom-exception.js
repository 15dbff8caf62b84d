
  // ---------------------------------------------------------------------------------------
  // DOMException (https://webidl.spec.whatwg.org/#idl-DOMException): an Error object
  // (SpiderMonkey's, so it has a stack and is reported like one) whose name and message are
  // the engine's, in `exceptionData`.
  const LEGACY_CODES = {
    __proto__: null,
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
    QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };
  const exceptionData = new WeakMapCtor();
  const exceptionOf = (e) => {
    const d = WeakMapGet(exceptionData, e);
    if (d === undefined) throw new TypeErrorCtor("'this' is not a DOMException");
    return d;
  };
  class DOMException extends ErrorCtor {
    // https://webidl.spec.whatwg.org/#dom-domexception-domexception
    constructor(message = "", name = "Error") {
      message = StringCtor(message);
      name = StringCtor(name);
      // The Error object is made directly (no `super()`, which would ask DOMException for
      // its prototype: a page may change it), with new.target's prototype.
      const self = ReflectConstruct(ErrorCtor, list(), new.target);
      // 1. Set this's name to name. 2. Set this's message to message.
      WeakMapSet(exceptionData, self, { __proto__: null, name, message });
      return self;
    }
    get name() { return exceptionOf(this).name; }
    get message() { return exceptionOf(this).message; }
    // https://webidl.spec.whatwg.org/#dom-domexception-code
    get code() { return LEGACY_CODES[exceptionOf(this).name] ?? 0; }
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
    ObjectDefineProperty(DOMException, CONSTANTS[i], dataDescriptor(CONSTANTS[i + 1], false, true, false));
    ObjectDefineProperty(DOMException.prototype, CONSTANTS[i], dataDescriptor(CONSTANTS[i + 1], false, true, false));
  }
  tag(DOMException, "DOMException");
  // Whether `e` is a DOMException of this realm (by the engine's record, not instanceof).
  const isDOMException = (e) => e !== null && typeof e === "object" && WeakMapHas(exceptionData, e);
