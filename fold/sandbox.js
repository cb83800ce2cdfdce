// The sandbox's prelude: run once in a fresh QuickJS context, before the
// page's module. It takes out what the page format says is absent, puts in
// the Date the format allows, and leaves globalThis.__quire_boot for the
// line appended to the module, which hands over the module's namespace.
// __quire_seal (called by Go once it holds the driver) freezes everything.
(function (g) {
  'use strict';
  const RealDate = g.Date;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const isArray = Array.isArray;
  const getProto = Object.getPrototypeOf;
  const ObjectProto = Object.prototype;
  const objectKeys = Object.keys;
  const freeze = Object.freeze;
  const isFrozen = Object.isFrozen;
  const ownKeys = Reflect.ownKeys;
  const getOwnDesc = Object.getOwnPropertyDescriptor;
  const defineProperty = Object.defineProperty;
  const numberIsFinite = Number.isFinite;
  const StringOf = String;
  const construct = Reflect.construct;
  const dateGetTime = RealDate.prototype.getTime;
  const dateParse = RealDate.parse;
  const ErrorProto = Error.prototype;
  const FunctionProto = Function.prototype;

  // The time of the event being folded, in ms since the epoch.
  let now = 0;
  // shared[0] is the index (from 1) of the fold running, read by Go.
  const shared = new Int32Array(new ArrayBuffer(8));

  // --- Date: UTC only, and the event's time as now.
  const dateOnly = /^[+-]?\d{4,6}-\d{2}-\d{2}$/;
  const dateTimeOffset = /^[+-]?\d{4,6}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;
  function checkText(s) {
    if (dateOnly.test(s) || dateTimeOffset.test(s)) return;
    throw new RangeError('a date and time without an offset reads local time, which the sandbox has not: ' + jsonStringify(s));
  }
  function isDate(v) {
    try { dateGetTime.call(v); return true; } catch (e) { return false; }
  }
  const Date = function Date(value) {
    if (new.target === undefined) throw new TypeError('Date called without new is not in the sandbox: use new Date()');
    if (arguments.length === 0) return construct(RealDate, [now], new.target);
    if (arguments.length > 1) throw new TypeError('a Date from several numbers reads local time: use new Date(Date.UTC(…))');
    if (typeof value === 'string') checkText(value);
    else if (typeof value === 'object' && value !== null && !isDate(value)) throw new TypeError('new Date takes a number, a Date or a text');
    return construct(RealDate, [value], new.target);
  };
  defineProperty(Date, 'prototype', { value: RealDate.prototype, writable: false, enumerable: false, configurable: false });
  defineProperty(RealDate.prototype, 'constructor', { value: Date, writable: true, enumerable: false, configurable: true });
  Date.UTC = RealDate.UTC;
  Date.now = function now_() { return now; };
  Date.parse = function parse(s) { s = StringOf(s); checkText(s); return dateParse(s); };
  const DP = RealDate.prototype;
  for (const name of ['getDate', 'getDay', 'getFullYear', 'getHours', 'getMilliseconds', 'getMinutes', 'getMonth',
    'getSeconds', 'getTimezoneOffset', 'getYear', 'setDate', 'setFullYear', 'setHours', 'setMilliseconds',
    'setMinutes', 'setMonth', 'setSeconds', 'setYear']) delete DP[name];
  for (const name of ['toString', 'toLocaleString', 'toLocaleDateString', 'toLocaleTimeString', 'toDateString', 'toTimeString']) {
    defineProperty(DP, name, {
      value: { [name]() { throw new TypeError('Date.prototype.' + name + ' reads local time: use toISOString()'); } }[name],
      writable: true, enumerable: false, configurable: true,
    });
  }
  g.Date = Date;

  // --- What the page format says is absent.
  const keep = new Set(['Object', 'Function', 'Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError',
    'TypeError', 'URIError', 'InternalError', 'AggregateError', 'Iterator', 'Array', 'parseInt', 'parseFloat', 'isNaN',
    'isFinite', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'Infinity',
    'NaN', 'undefined', 'Number', 'Boolean', 'String', 'Math', 'Reflect', 'Symbol', 'globalThis', 'Date', 'RegExp',
    'JSON', 'Proxy', 'Map', 'Set', 'WeakMap', 'WeakSet', 'ArrayBuffer', 'SharedArrayBuffer', 'Uint8ClampedArray',
    'Int8Array', 'Uint8Array', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array',
    'BigUint64Array', 'Float16Array', 'Float32Array', 'Float64Array', 'DataView', 'BigInt', 'Atomics']);
  for (const name of ownKeys(g)) {
    if (typeof name === 'string' && !keep.has(name)) delete g[name];
  }
  delete g.Function; // reached through (function(){}).constructor no more, below
  delete Math.random;
  const fnProtos = [FunctionProto, getProto(function* () {}), getProto(async function () {}), getProto(async function* () {})];
  for (const p of fnProtos) defineProperty(p, 'constructor', { value: undefined, writable: false, enumerable: false, configurable: false });

  // --- Freezing: every object reachable from globalThis and the intrinsics
  // no global names, so nothing a fold writes outside its views stays.
  function deepFreeze(roots) {
    const todo = roots.slice();
    const seen = new Set();
    while (todo.length > 0) {
      const o = todo.pop();
      if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
      seen.add(o);
      try { freeze(o); } catch (e) { /* a module namespace: its bindings are the module's own */ }
      todo.push(getProto(o));
      for (const k of ownKeys(o)) {
        const d = getOwnDesc(o, k);
        if (d === undefined) continue;
        if ('value' in d) todo.push(d.value);
        if (d.get) todo.push(d.get);
        if (d.set) todo.push(d.set);
      }
    }
  }
  function* gen() {}
  const intrinsics = [
    g, getProto([][Symbol.iterator]()), getProto(new Map()[Symbol.iterator]()), getProto(new Set()[Symbol.iterator]()),
    getProto(''[Symbol.iterator]()), getProto(/a/[Symbol.matchAll]('')), gen, getProto(gen), getProto(gen()),
    getProto(getProto(gen())), getProto([].values().map((x) => x)), getProto(async function () {}),
    getProto(async function* () {}), getProto(Int8Array), (async function () {})(),
  ];
  try { intrinsics.push(getProto(Iterator.from({ next() { return { done: true }; } }))); } catch (e) { /* absent */ }

  // --- Checking what a fold returns.
  const maxDepth = 512;
  function describe(v) {
    if (v === undefined) return 'undefined';
    if (typeof v === 'number') return StringOf(v);
    if (typeof v === 'bigint') return 'a BigInt';
    if (typeof v === 'symbol') return 'a symbol';
    if (typeof v === 'function') return 'a function';
    if (isDate(v)) return 'a Date';
    if (v instanceof Map) return 'a Map';
    if (v instanceof Set) return 'a Set';
    return 'an instance of a class';
  }
  function pathOf(node) {
    let p = '';
    for (; node !== null && node.k !== null; node = node.p) p = '/' + StringOf(node.k).replaceAll('~', '~0').replaceAll('/', '~1') + p;
    return p === '' ? '/' : p;
  }
  // unfit returns why v is not JSON, or '' when it is.
  function unfit(v) {
    const todo = [{ v, d: 0, p: null, k: null }];
    while (todo.length > 0) {
      const n = todo.pop();
      const x = n.v;
      switch (typeof x) {
        case 'string': case 'boolean': continue;
        case 'number':
          if (numberIsFinite(x)) continue;
          return describe(x) + ' at ' + pathOf(n);
        case 'object':
          if (x === null) continue;
          break;
        default:
          return describe(x) + ' at ' + pathOf(n);
      }
      if (n.d >= maxDepth) return 'a cycle or nesting deeper than 512 levels at ' + pathOf(n);
      if (isArray(x)) {
        for (let i = 0; i < x.length; i++) todo.push({ v: x[i], d: n.d + 1, p: n, k: i });
        continue;
      }
      const proto = getProto(x);
      if (proto !== ObjectProto && proto !== null) return describe(x) + ' at ' + pathOf(n);
      for (const k of objectKeys(x)) todo.push({ v: x[k], d: n.d + 1, p: n, k });
    }
    return '';
  }
  function utf8Length(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) ? (i++, 4) : 3;
    }
    return n;
  }
  function errorText(e) {
    try {
      if (typeof e === 'object' && e !== null && (e instanceof Error || ErrorProto.isPrototypeOf(e))) {
        const stack = typeof e.stack === 'string' ? e.stack : '';
        return [StringOf(e), stack];
      }
      if (typeof e === 'string') return [e, ''];
      if (typeof e === 'object' && e !== null) {
        const j = jsonStringify(e);
        if (j !== undefined) return [j, ''];
      }
      return [StringOf(e), ''];
    } catch (err) {
      return ['a thrown value that has no text', ''];
    }
  }

  // copyView copies what a fold returned as JSON would give it back:
  // plain objects (keys in their order) and lists of text, finite
  // numbers (a negative zero as 0), booleans and null; an object two
  // members share is copied twice; symbol keys and the members that are
  // not enumerable are left out. It answers null when out is not JSON
  // (unfit tells why), else copyOut with the copy and an upper bound of
  // its size as JSON text.
  //
  // It recurses (cheaper than a stack of its own in QuickJS) down to
  // recurseDepth levels, and below that walks with a stack of its own:
  // QuickJS built for WASI does not check its C stack, which holds some
  // 200 frames of JavaScript.
  const recurseDepth = 48;
  const copyOut = { v: null, bound: 0 };
  let bound = 0;
  let bad = false;
  function set(dst, k, y) {
    if (k in ObjectProto) defineProperty(dst, k, { value: y, writable: true, enumerable: true, configurable: true });
    else dst[k] = y;
  }
  function copy(x, d) {
    switch (typeof x) {
      case 'string': bound += 6 * x.length + 2; return x;
      case 'boolean': bound += 5; return x;
      case 'number':
        if (!numberIsFinite(x)) { bad = true; return null; }
        bound += 24;
        return x === 0 ? 0 : x;
      case 'object':
        if (x === null) { bound += 4; return null; }
        break;
      default:
        bad = true;
        return null;
    }
    if (d >= maxDepth) { bad = true; return null; }
    if (d >= recurseDepth) return copyDeep(x, d);
    bound += 2;
    if (isArray(x)) {
      const n = x.length;
      const out = [];
      for (let i = 0; i < n; i++) {
        out.push(copy(x[i], d + 1));
        if (bad) return null;
      }
      bound += n;
      return out;
    }
    const proto = getProto(x);
    if (proto !== ObjectProto && proto !== null) { bad = true; return null; }
    const out = {};
    for (const k in x) {
      bound += 6 * k.length + 4;
      const y = copy(x[k], d + 1);
      if (bad) return null;
      if (k in ObjectProto) defineProperty(out, k, { value: y, writable: true, enumerable: true, configurable: true });
      else out[k] = y;
    }
    return out;
  }

  // copyDeep copies below recurseDepth without recursing.
  function copyDeep(x0, d0) {
    const holder = [];
    const srcs = [[x0]], dsts = [holder], depths = [d0 - 1];
    while (srcs.length > 0) {
      const src = srcs.pop(), dst = dsts.pop(), d = depths.pop();
      const list = isArray(src);
      const ks = list ? null : objectKeys(src);
      const n = list ? src.length : ks.length;
      bound += 2 + n;
      for (let i = 0; i < n; i++) {
        const k = list ? i : ks[i];
        const x = src[k];
        let y;
        if (!list) bound += 6 * k.length + 4;
        if (typeof x === 'object' && x !== null) {
          if (d + 1 >= maxDepth) { bad = true; return null; }
          if (isArray(x)) y = [];
          else {
            const proto = getProto(x);
            if (proto !== ObjectProto && proto !== null) { bad = true; return null; }
            y = {};
          }
          srcs.push(x); dsts.push(y); depths.push(d + 1);
        } else {
          y = copy(x, d + 1);
          if (bad) return null;
        }
        if (list) dst.push(y);
        else set(dst, k, y);
      }
    }
    return holder[0];
  }
  function copyView(out) {
    bound = 0;
    bad = false;
    const v = copy(out, 0);
    if (bad) return null;
    copyOut.v = v;
    copyOut.bound = bound;
    return copyOut;
  }

  // --- The driver: folds a page of events in one call.
  // views is JSON text; events is the events' JSON texts, one a line;
  // times is the JSON list of their times in ms; names the JSON list of
  // the declared views; limit the most bytes the views may take. It
  // answers a header line of JSON, a newline and the views as JSON text
  // (after the last event, or, on a stall at the first event, as given).
  function driver(fold, viewsText, eventsText, timesText, namesText, limit) {
    let views = jsonParse(viewsText);
    const events = eventsText.split('\n');
    const times = jsonParse(timesText);
    const names = new Set(jsonParse(namesText));
    const stall = (i, head) => jsonStringify(head) + '\n' + (i === 0 ? viewsText : '');
    for (let i = 0; i < events.length; i++) {
      shared[0] = i + 1;
      now = times[i];
      let out;
      try {
        out = fold(views, jsonParse(events[i]));
      } catch (e) {
        const [error, stack] = errorText(e);
        return stall(i, { n: i, kind: 'raised', error, stack });
      }
      if (typeof out !== 'object' || out === null || isArray(out) || (getProto(out) !== ObjectProto && getProto(out) !== null)) {
        const why = unfit(out);
        if (why !== '') return stall(i, { n: i, kind: 'unfit', error: 'the fold returned ' + why });
        return stall(i, { n: i, kind: 'shape', error: 'the fold returned ' + (isArray(out) ? 'a list' : typeof out) + ', not an object of views' });
      }
      for (const k of objectKeys(out)) {
        if (!names.has(k)) return stall(i, { n: i, kind: 'shape', error: 'the fold returned a view named ' + jsonStringify(k) + ', which data.views does not declare' });
      }
      const c = copyView(out);
      if (c === null) return stall(i, { n: i, kind: 'unfit', error: 'the fold returned ' + (unfit(out) || 'a value JSON cannot carry') });
      if (c.bound > limit) {
        const size = utf8Length(jsonStringify(c.v));
        if (size > limit) return stall(i, { n: i, kind: 'size', error: 'the views take ' + size + ' bytes as JSON, more than ' + limit });
      }
      views = c.v;
      c.v = null;
    }
    shared[0] = 0;
    return jsonStringify({ n: events.length }) + '\n' + jsonStringify(views);
  }

  let booted = false;
  g.__quire_boot = function (ns) {
    if (booted) throw new Error('the sandbox was booted twice');
    booted = true;
    delete g.__quire_boot;
    const fold = ns.fold;
    if (typeof fold !== 'function') throw new TypeError('the module does not export a function fold');
    if ('answer' in ns) throw new TypeError('the module exports answer: a page never runs');
    const run = function (viewsText, eventsText, timesText, namesText, limit) {
      return driver(fold, viewsText, eventsText, timesText, namesText, limit);
    };
    g.__quire_driver = run;
    g.__quire_shared = shared.buffer;
    g.__quire_seal = function () {
      delete g.__quire_driver;
      delete g.__quire_shared;
      delete g.__quire_seal;
      deepFreeze(intrinsics.concat([ns]));
      return isFrozen(g) && isFrozen(Math) && isFrozen(Array.prototype);
    };
  };
})(globalThis);
