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
  const encodeURIText = g.encodeURIComponent;
  const unescapeText = g.unescape;

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

  // --- What the page format says is absent. SharedArrayBuffer and
  // Atomics are not kept: shared memory has no use in a fold, which runs
  // alone, and the type check refuses both names at save.
  const keep = new Set(['Object', 'Function', 'Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError',
    'TypeError', 'URIError', 'InternalError', 'AggregateError', 'Iterator', 'Array', 'parseInt', 'parseFloat', 'isNaN',
    'isFinite', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'Infinity',
    'NaN', 'undefined', 'Number', 'Boolean', 'String', 'Math', 'Reflect', 'Symbol', 'globalThis', 'Date', 'RegExp',
    'JSON', 'Proxy', 'Map', 'Set', 'WeakMap', 'WeakSet', 'ArrayBuffer', 'Uint8ClampedArray',
    'Int8Array', 'Uint8Array', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array',
    'BigUint64Array', 'Float16Array', 'Float32Array', 'Float64Array', 'DataView', 'BigInt']);
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

  // copy(x, d) copies a value at depth d as JSON would give it back:
  // plain objects (keys in their order) and lists of text, finite
  // numbers (a negative zero as 0), booleans and null; an object two
  // members share is copied twice; symbol keys and the members that are
  // not enumerable are left out. It sets bad when x is not JSON (unfit
  // tells why), and adds to bound an upper bound of the copy's size as
  // JSON text.
  //
  // It recurses (cheaper than a stack of its own in QuickJS) down to
  // recurseDepth levels, and below that walks with a stack of its own:
  // QuickJS built for WASI does not check its C stack, which holds some
  // 200 frames of JavaScript.
  const recurseDepth = 48;
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

  // --- The shapes, checked after every fold (output-shapes.md). fits
  // says whether a view matches its shape, with the rules the shape adds,
  // as ledger/shape's Check says of its JSON text: the same fields,
  // bounds, names once each, a low at most its value and a high at least
  // it, every at in its period's form and later than the one before, and
  // a row of one cell for each column. The driver checks a view with it
  // only when its shape's copier (the fused walk, below) declined the
  // view; it walks the copy copy made, so every object is plain and every
  // number finite. A view it refuses
  // stalls the views at that fold; Go then checks it again, and the stall
  // gives ledger/shape's words. (A module runs no code before the sandbox
  // is sealed: fold/module refuses top-level statements. Go checks the
  // views a page ends with all the same.)
  //
  // What costs is JavaScript run for each character of a text, in this
  // engine: a name is looked at character by character only when it holds
  // a surrogate (a native regular expression says so), and each at is
  // parsed once and remembered, since the points of a series are mostly
  // those of the fold before.
  const hasOwn = Object.hasOwn;
  const createObject = Object.create;
  const floor = Math.floor;
  const formTime = 0, formDay = 1, formWeek = 2, formMonth = 3, formQuarter = 4, formYear = 5;
  const periodForms = createObject(null);
  periodForms.day = formDay; periodForms.week = formWeek; periodForms.month = formMonth;
  periodForms.quarter = formQuarter; periodForms.year = formYear;
  function isObj(x) { return typeof x === 'object' && x !== null && !isArray(x); }
  // onlyKeys: o has no key but those of allowed (an object of true), and
  // every key of required.
  function onlyKeys(o, allowed, required) {
    const ks = objectKeys(o);
    for (let i = 0; i < ks.length; i++) if (allowed[ks[i]] !== true) return false;
    for (let i = 0; i < required.length; i++) if (!hasOwn(o, required[i])) return false;
    return true;
  }
  function keySet(list) {
    const o = createObject(null);
    for (let i = 0; i < list.length; i++) o[list[i]] = true;
    return o;
  }
  const seriesKeys = keySet(['unit', 'period', 'origin', 'lines', 'marks']), seriesRequired = ['lines'];
  const lineKeys = keySet(['name', 'points']), lineRequired = ['name', 'points'];
  const markKeys = keySet(['label', 'value']), markRequired = ['label', 'value'];
  const categoriesKeys = keySet(['unit', 'values']), categoriesRequired = ['values'];
  const tableKeys = keySet(['columns', 'rows']), tableRequired = ['columns', 'rows'];
  const columnKeys = keySet(['name', 'unit']), columnRequired = ['name'];
  const textKeys = keySet(['text']), textRequired = ['text'];

  function isHigh(c) { return c >= '\ud800' && c < '\udc00'; }
  function isLow(c) { return c >= '\udc00' && c < '\ue000'; }
  // codePoints counts a text's characters as Go reads its JSON: a pair of
  // surrogates is one, and so is a lone one (Go reads it as U+FFFD).
  function codePoints(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      if (isHigh(s[i]) && i + 1 < s.length && isLow(s[i + 1])) i++;
      n++;
    }
    return n;
  }
  // utf8Bytes(s) is s's length in UTF-8 as Go writes it, a lone
  // surrogate 3 bytes (U+FFFD). encodeURIComponent writes each byte of
  // the UTF-8 as %XX or itself, and unescape makes each one unit again,
  // both in C; a walk of each unit in QuickJS took 0.9 s of the 600 KB of
  // views just past their bound. A piece of 64 Ki units at a time (a pair
  // of surrogates kept whole), so what they make (up to 9 units a unit)
  // stays small beside the sandbox's memory. encodeURIComponent refuses a
  // lone surrogate: such a text is walked. Both are the prelude's own,
  // which no module changes.
  function utf8Bytes(s) {
    try {
      let n = 0;
      for (let i = 0; i < s.length;) {
        let j = i + 65536 < s.length ? i + 65536 : s.length;
        const c = s.charCodeAt(j - 1);
        if (c >= 0xd800 && c < 0xdc00 && j < s.length) j++;
        n += unescapeText(encodeURIText(s.slice(i, j))).length;
        i = j;
      }
      return n;
    } catch (e) {
      // A lone surrogate.
    }
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c < '\u0080') n += 1;
      else if (c < '\u0800') n += 2;
      else if (isHigh(c) && i + 1 < s.length && isLow(s[i + 1])) { n += 4; i++; } else n += 3;
    }
    return n;
  }
  const surrogate = /[\ud800-\udfff]/;
  // nameKey is a name as Go compares it: each lone surrogate read as U+FFFD.
  function nameKey(s) {
    if (!surrogate.test(s)) return s;
    let lone = false;
    for (let i = 0; i < s.length; i++) {
      if (isHigh(s[i]) && i + 1 < s.length && isLow(s[i + 1])) i++;
      else if (isHigh(s[i]) || isLow(s[i])) { lone = true; break; }
    }
    if (!lone) return s;
    let out = '';
    for (let i = 0; i < s.length; i++) {
      if (isHigh(s[i]) && i + 1 < s.length && isLow(s[i + 1])) { out += s[i] + s[i + 1]; i++; } else if (isHigh(s[i]) || isLow(s[i])) out += '\ufffd';
      else out += s[i];
    }
    return out;
  }
  // isName: text of 1 to 64 characters (a name, a label or a unit).
  function isName(x) {
    if (typeof x !== 'string' || x.length === 0 || x.length > 128) return false;
    return x.length <= 64 || codePoints(x) <= 64;
  }
  // fitsRecord checks a point (key 'at') or a value of categories (key
  // 'name'): no field but key, value, low and high; key and a value that
  // is a number; a low at most the value and a high at least it. Points
  // and values are a view's most numerous records: one pass over their
  // keys, with no lookup of the allowed ones.
  function fitsRecord(r, key) {
    const ks = objectKeys(r);
    let hasKey = false, hasValue = false;
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i];
      if (k === key) hasKey = true;
      else if (k === 'value') hasValue = true;
      else if (k !== 'low' && k !== 'high') return false;
    }
    if (!hasKey || !hasValue) return false;
    const v = r.value;
    if (typeof v !== 'number') return false;
    if (ks.length > 2) {
      if (hasOwn(r, 'low') && (typeof r.low !== 'number' || r.low > v)) return false;
      if (hasOwn(r, 'high') && (typeof r.high !== 'number' || r.high < v)) return false;
    }
    return true;
  }

  // The instant an at begins, as ledger/shape's parseAt gives it: seconds
  // since 1970 in UTC and the digits of a fraction without trailing zeros.
  let atSec = 0, atFrac = '';
  function isDigits(s, from, to) {
    for (let i = from; i < to; i++) if (!(s[i] >= '0' && s[i] <= '9')) return false;
    return true;
  }
  function num(s, from, to) {
    let n = 0;
    for (let i = from; i < to; i++) n = n * 10 + (s[i] - '0');
    return n;
  }
  function isLeap(y) { return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0); }
  function daysIn(y, m) { return m === 2 ? (isLeap(y) ? 29 : 28) : (m === 4 || m === 6 || m === 9 || m === 11) ? 30 : 31; }
  // days since 1970-01-01 of a day of the proleptic Gregorian calendar.
  function daysOf(y, m, d) {
    if (m <= 2) y -= 1;
    const era = floor(y / 400);
    const yoe = y - era * 400;
    const doy = floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
    return era * 146097 + yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy - 719468;
  }
  function weekday(days) { return (((days % 7) + 11) % 7); } // 0 for Sunday
  function weeksIn(y) {
    const w = weekday(daysOf(y, 1, 1));
    return w === 4 || (w === 3 && isLeap(y)) ? 53 : 52;
  }
  function at(y, m, d) { atSec = daysOf(y, m, d) * 86400; atFrac = ''; return true; }
  function parseAt(f, s) {
    const n = s.length;
    switch (f) {
      case formDay: {
        if (n !== 10 || s[4] !== '-' || s[7] !== '-' || !isDigits(s, 0, 4) || !isDigits(s, 5, 7) || !isDigits(s, 8, 10)) return false;
        const y = num(s, 0, 4), m = num(s, 5, 7), d = num(s, 8, 10);
        if (m < 1 || m > 12 || d < 1 || d > daysIn(y, m)) return false;
        return at(y, m, d);
      }
      case formWeek: {
        if (n !== 8 || s[4] !== '-' || s[5] !== 'W' || !isDigits(s, 0, 4) || !isDigits(s, 6, 8)) return false;
        const y = num(s, 0, 4), w = num(s, 6, 8);
        if (w < 1 || w > weeksIn(y)) return false;
        const jan4 = daysOf(y, 1, 4);
        atSec = (jan4 - ((weekday(jan4) + 6) % 7) + 7 * (w - 1)) * 86400;
        atFrac = '';
        return true;
      }
      case formMonth: {
        if (n !== 7 || s[4] !== '-' || !isDigits(s, 0, 4) || !isDigits(s, 5, 7)) return false;
        const m = num(s, 5, 7);
        if (m < 1 || m > 12) return false;
        return at(num(s, 0, 4), m, 1);
      }
      case formQuarter:
        if (n !== 7 || s[4] !== '-' || s[5] !== 'Q' || !isDigits(s, 0, 4) || !(s[6] >= '1' && s[6] <= '4')) return false;
        return at(num(s, 0, 4), 3 * (s[6] - '1') + 1, 1);
      case formYear:
        if (n !== 4 || !isDigits(s, 0, 4)) return false;
        return at(num(s, 0, 4), 1, 1);
    }
    // formTime: RFC 3339, as ledger/shape's parseTime reads it.
    if (n < 20 || s[4] !== '-' || s[7] !== '-' || (s[10] !== 'T' && s[10] !== 't') || s[13] !== ':' || s[16] !== ':' ||
      !isDigits(s, 0, 4) || !isDigits(s, 5, 7) || !isDigits(s, 8, 10) || !isDigits(s, 11, 13) || !isDigits(s, 14, 16) || !isDigits(s, 17, 19)) return false;
    const y = num(s, 0, 4), mo = num(s, 5, 7), d = num(s, 8, 10);
    const h = num(s, 11, 13), mi = num(s, 14, 16), sec = num(s, 17, 19);
    if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59) return false;
    let i = 19;
    let frac = '';
    if (s[i] === '.') {
      let j = i + 1;
      while (j < n && s[j] >= '0' && s[j] <= '9') j++;
      if (j === i + 1) return false;
      let end = j;
      while (end > i + 1 && s[end - 1] === '0') end--;
      for (let k = i + 1; k < end; k++) frac += s[k];
      i = j;
    }
    let offset = 0;
    if (n - i === 1 && (s[i] === 'Z' || s[i] === 'z')) {
      // UTC
    } else if (n - i === 6 && (s[i] === '+' || s[i] === '-') && s[i + 3] === ':' && isDigits(s, i + 1, i + 3) && isDigits(s, i + 4, i + 6)) {
      const oh = num(s, i + 1, i + 3), om = num(s, i + 4, i + 6);
      if (oh > 23 || om > 59) return false;
      offset = (oh * 3600 + om * 60) * (s[i] === '-' ? -1 : 1);
    } else return false;
    atSec = daysOf(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    atFrac = frac;
    return true;
  }

  // atMemo remembers, for each form, what parseAt found of an at: its
  // instant, or null for one not in the form.
  const atMemo = [new Map(), new Map(), new Map(), new Map(), new Map(), new Map()];
  function parseAtOnce(f, s) {
    const memo = atMemo[f];
    const hit = memo.get(s);
    if (hit !== undefined) {
      if (hit === null) return false;
      atSec = hit[0];
      atFrac = hit[1];
      return true;
    }
    const ok = parseAt(f, s);
    if (memo.size >= 8192) memo.clear();
    memo.set(s, ok ? [atSec, atFrac] : null);
    return ok;
  }

  function fitsSeries(v) {
    if (!isObj(v) || !onlyKeys(v, seriesKeys, seriesRequired)) return false;
    if (hasOwn(v, 'unit') && !isName(v.unit)) return false;
    let f = formTime;
    if (hasOwn(v, 'period')) {
      if (typeof v.period !== 'string' || periodForms[v.period] === undefined) return false;
      f = periodForms[v.period];
    }
    if (hasOwn(v, 'origin') && (typeof v.origin !== 'string' || !parseAt(f, v.origin))) return false;
    const lines = v.lines;
    if (!isArray(lines) || lines.length < 1 || lines.length > 20) return false;
    const seen = createObject(null);
    let total = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (!isObj(line) || !onlyKeys(line, lineKeys, lineRequired) || !isName(line.name)) return false;
      const key = nameKey(line.name);
      if (seen[key] === true) return false;
      seen[key] = true;
      const points = line.points;
      if (!isArray(points)) return false;
      total += points.length;
      if (total > 2000) return false;
      let prevSec = 0, prevFrac = '';
      for (let j = 0; j < points.length; j++) {
        const p = points[j];
        if (!isObj(p) || !fitsRecord(p, 'at') || typeof p.at !== 'string' || !parseAtOnce(f, p.at)) return false;
        if (j > 0 && !(atSec > prevSec || (atSec === prevSec && atFrac > prevFrac))) return false;
        prevSec = atSec;
        prevFrac = atFrac;
      }
    }
    if (hasOwn(v, 'marks')) {
      const marks = v.marks;
      if (!isArray(marks) || marks.length > 8) return false;
      for (let i = 0; i < marks.length; i++) {
        const m = marks[i];
        if (!isObj(m) || !onlyKeys(m, markKeys, markRequired) || !isName(m.label) || typeof m.value !== 'number') return false;
      }
    }
    return true;
  }
  function fitsCategories(v) {
    if (!isObj(v) || !onlyKeys(v, categoriesKeys, categoriesRequired)) return false;
    if (hasOwn(v, 'unit') && !isName(v.unit)) return false;
    const values = v.values;
    if (!isArray(values) || values.length < 1 || values.length > 200) return false;
    const seen = createObject(null);
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (!isObj(x) || !fitsRecord(x, 'name') || !isName(x.name)) return false;
      const key = nameKey(x.name);
      if (seen[key] === true) return false;
      seen[key] = true;
    }
    return true;
  }
  function fitsTable(v) {
    if (!isObj(v) || !onlyKeys(v, tableKeys, tableRequired)) return false;
    const columns = v.columns, rows = v.rows;
    if (!isArray(columns) || columns.length < 1 || columns.length > 50) return false;
    const seen = createObject(null);
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i];
      if (!isObj(c) || !onlyKeys(c, columnKeys, columnRequired) || !isName(c.name)) return false;
      if (hasOwn(c, 'unit') && !isName(c.unit)) return false;
      const key = nameKey(c.name);
      if (seen[key] === true) return false;
      seen[key] = true;
    }
    if (!isArray(rows) || rows.length > 500) return false;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (!isArray(row) || row.length !== columns.length) return false;
      for (let j = 0; j < row.length; j++) {
        const cell = row[j];
        const t = typeof cell;
        if (t !== 'string' && t !== 'number' && t !== 'boolean' && cell !== null) return false;
      }
    }
    return true;
  }
  function fitsText(v) {
    if (!isObj(v) || !onlyKeys(v, textKeys, textRequired) || typeof v.text !== 'string') return false;
    return v.text.length <= 21845 || utf8Bytes(v.text) <= 65536;
  }
  const shapeFits = createObject(null);
  shapeFits.series = fitsSeries;
  shapeFits.categories = fitsCategories;
  shapeFits.table = fitsTable;
  shapeFits.text = fitsText;

  // --- The fused walk: the copy and the shape check in one visit of each
  // value. A view of a shape is copied by its shape's copier, which reads
  // each member once (as copy does), keeps what copy would keep, in the
  // same order, adds the same to bound, and checks what its shape's fits
  // function checks as it goes. It answers undefined for anything it does
  // not expect, JSON or not: the driver then copies that view with copy
  // and checks it with fits, as before, so what a copier declines is
  // judged, and worded, exactly as without it. (A second visit of every
  // value was a quarter of the whole path's time: docs/fold-speed.md.)
  function isPlain(x) {
    if (typeof x !== 'object' || x === null || isArray(x)) return false;
    const proto = getProto(x);
    return proto === ObjectProto || proto === null;
  }
  // copyRecord copies a point (key 'at') or a value of categories (key
  // 'name'): key as text, value, low and high finite numbers, nothing
  // else, a low at most the value and a high at least it.
  function copyRecord(r, key) {
    if (!isPlain(r)) return undefined;
    const out = {};
    let hasKey = false, hasValue = false, hasLow = false, hasHigh = false;
    bound += 2;
    const ks = objectKeys(r); // for in gives the same keys (r is plain), in this engine more slowly
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i];
      const y = r[k];
      if (k === key) {
        if (typeof y !== 'string') return undefined;
        out[k] = y;
        hasKey = true;
        bound += 6 * y.length + 2;
      } else {
        if (k === 'value') hasValue = true;
        else if (k === 'low') hasLow = true;
        else if (k === 'high') hasHigh = true;
        else return undefined;
        if (typeof y !== 'number' || !numberIsFinite(y)) return undefined;
        out[k] = y === 0 ? 0 : y;
        bound += 24;
      }
      bound += 6 * k.length + 4;
    }
    if (!hasKey || !hasValue) return undefined;
    const v = out.value;
    if ((hasLow && out.low > v) || (hasHigh && out.high < v)) return undefined;
    return out;
  }
  // copyPoint and copyValue copy a point or a value of categories of the
  // commonest form, its key and then value, nothing else, reading each
  // by a name written in the code: in this engine a key computed at run
  // time is looked up anew each time, and an object built from a literal
  // is made faster than member by member. They add to bound what
  // copyRecord adds for the same record, and leave any other form to it.
  function copyPoint(r) {
    if (!isPlain(r)) return undefined;
    const ks = objectKeys(r);
    if (ks.length !== 2 || ks[0] !== 'at' || ks[1] !== 'value') return copyRecord(r, 'at');
    const at = r.at, value = r.value;
    if (typeof at !== 'string' || typeof value !== 'number' || !numberIsFinite(value)) return undefined;
    bound += 78 + 6 * at.length; // {} 2, "at": 16, the at 6 a character and 2, "value": 34, its number 24
    return { at, value: value === 0 ? 0 : value };
  }
  function copyValue(r) {
    if (!isPlain(r)) return undefined;
    const ks = objectKeys(r);
    if (ks.length !== 2 || ks[0] !== 'name' || ks[1] !== 'value') return copyRecord(r, 'name');
    const name = r.name, value = r.value;
    if (typeof name !== 'string' || typeof value !== 'number' || !numberIsFinite(value)) return undefined;
    bound += 90 + 6 * name.length; // as copyPoint, with "name": 28
    return { name, value: value === 0 ? 0 : value };
  }
  // copyName copies a name, a label or a unit.
  function copyName(x) {
    if (!isName(x)) return undefined;
    bound += 6 * x.length + 2;
    return x;
  }
  // copyNames copies an object whose members are names (those of
  // allowed), each name of required among them: a column, a line's
  // name aside.
  function copyNames(o, allowed, required) {
    if (!isPlain(o)) return undefined;
    const out = {};
    bound += 2;
    for (const k in o) {
      if (allowed[k] !== true) return undefined;
      const y = copyName(o[k]);
      if (y === undefined) return undefined;
      out[k] = y;
      bound += 6 * k.length + 4;
    }
    for (let i = 0; i < required.length; i++) if (!hasOwn(out, required[i])) return undefined;
    return out;
  }
  function copyPoints(points, f) {
    if (!isArray(points)) return undefined;
    const n = points.length;
    const out = [];
    let prevSec = 0, prevFrac = '';
    for (let j = 0; j < n; j++) {
      const p = copyPoint(points[j]);
      if (p === undefined || !parseAtOnce(f, p.at)) return undefined;
      if (j > 0 && !(atSec > prevSec || (atSec === prevSec && atFrac > prevFrac))) return undefined;
      prevSec = atSec;
      prevFrac = atFrac;
      out.push(p);
    }
    bound += 2 + n;
    return out;
  }
  function copySeries(v) {
    if (!isPlain(v)) return undefined;
    const out = {};
    let lines, marks, hasLines = false, hasMarks = false, f = formTime;
    bound += 2;
    for (const k in v) {
      const x = v[k];
      switch (k) {
        case 'unit':
          if ((out.unit = copyName(x)) === undefined) return undefined;
          break;
        case 'period':
          if (typeof x !== 'string' || periodForms[x] === undefined) return undefined;
          f = periodForms[x];
          out.period = x;
          bound += 6 * x.length + 2;
          break;
        case 'origin':
          if (typeof x !== 'string') return undefined;
          out.origin = x;
          bound += 6 * x.length + 2;
          break;
        case 'lines':
          lines = x;
          hasLines = true;
          out.lines = null; // its place among the keys; copied below, once the period is known
          break;
        case 'marks':
          marks = x;
          hasMarks = true;
          out.marks = null;
          break;
        default:
          return undefined;
      }
      bound += 6 * k.length + 4;
    }
    if (hasOwn(out, 'origin') && !parseAt(f, out.origin)) return undefined;
    if (!hasLines || !isArray(lines) || lines.length < 1 || lines.length > 20) return undefined;
    const seen = createObject(null);
    const ls = [];
    let total = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (!isPlain(line)) return undefined;
      const l = {};
      let hasName = false, hasPoints = false;
      bound += 2;
      for (const k in line) {
        const x = line[k];
        if (k === 'name') {
          if ((l.name = copyName(x)) === undefined) return undefined;
          const key = nameKey(x);
          if (seen[key] === true) return undefined;
          seen[key] = true;
          hasName = true;
        } else if (k === 'points') {
          if (!isArray(x) || (total += x.length) > 2000) return undefined;
          if ((l.points = copyPoints(x, f)) === undefined) return undefined;
          hasPoints = true;
        } else return undefined;
        bound += 6 * k.length + 4;
      }
      if (!hasName || !hasPoints) return undefined;
      ls.push(l);
    }
    bound += 2 + lines.length;
    out.lines = ls;
    if (hasMarks) {
      if (!isArray(marks) || marks.length > 8) return undefined;
      const ms = [];
      for (let i = 0; i < marks.length; i++) {
        const m = marks[i];
        if (!isPlain(m)) return undefined;
        const c = {};
        let hasLabel = false, hasValue = false;
        bound += 2;
        for (const k in m) {
          const x = m[k];
          if (k === 'label') {
            if ((c.label = copyName(x)) === undefined) return undefined;
            hasLabel = true;
          } else if (k === 'value') {
            if (typeof x !== 'number' || !numberIsFinite(x)) return undefined;
            c.value = x === 0 ? 0 : x;
            hasValue = true;
            bound += 24;
          } else return undefined;
          bound += 6 * k.length + 4;
        }
        if (!hasLabel || !hasValue) return undefined;
        ms.push(c);
      }
      bound += 2 + marks.length;
      out.marks = ms;
    }
    return out;
  }
  function copyCategories(v) {
    if (!isPlain(v)) return undefined;
    const out = {};
    let hasValues = false;
    bound += 2;
    for (const k in v) {
      const x = v[k];
      if (k === 'unit') {
        if ((out.unit = copyName(x)) === undefined) return undefined;
      } else if (k === 'values') {
        if (!isArray(x) || x.length < 1 || x.length > 200) return undefined;
        const seen = createObject(null);
        const vs = [];
        for (let i = 0; i < x.length; i++) {
          const r = copyValue(x[i]);
          if (r === undefined || !isName(r.name)) return undefined;
          const key = nameKey(r.name);
          if (seen[key] === true) return undefined;
          seen[key] = true;
          vs.push(r);
        }
        bound += 2 + x.length;
        out.values = vs;
        hasValues = true;
      } else return undefined;
      bound += 6 * k.length + 4;
    }
    return hasValues ? out : undefined;
  }
  function copyTable(v) {
    if (!isPlain(v)) return undefined;
    const out = {};
    let columns, rows, hasColumns = false, hasRows = false;
    bound += 2;
    for (const k in v) {
      if (k === 'columns') {
        columns = v[k];
        hasColumns = true;
      } else if (k === 'rows') {
        rows = v[k];
        hasRows = true;
      } else return undefined;
      out[k] = null; // its place among the keys
      bound += 6 * k.length + 4;
    }
    if (!hasColumns || !hasRows || !isArray(columns) || columns.length < 1 || columns.length > 50) return undefined;
    const seen = createObject(null);
    const cs = [];
    for (let i = 0; i < columns.length; i++) {
      const c = copyNames(columns[i], columnKeys, columnRequired);
      if (c === undefined) return undefined;
      const key = nameKey(c.name);
      if (seen[key] === true) return undefined;
      seen[key] = true;
      cs.push(c);
    }
    bound += 2 + columns.length;
    out.columns = cs;
    if (!isArray(rows) || rows.length > 500) return undefined;
    const width = columns.length;
    const rs = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (!isArray(row) || row.length !== width) return undefined;
      const r = [];
      for (let j = 0; j < width; j++) {
        const cell = row[j];
        switch (typeof cell) {
          case 'string': bound += 6 * cell.length + 2; r.push(cell); break;
          case 'boolean': bound += 5; r.push(cell); break;
          case 'number':
            if (!numberIsFinite(cell)) return undefined;
            bound += 24;
            r.push(cell === 0 ? 0 : cell);
            break;
          default:
            if (cell !== null) return undefined;
            bound += 4;
            r.push(null);
        }
      }
      bound += 2 + width;
      rs.push(r);
    }
    bound += 2 + rows.length;
    out.rows = rs;
    return out;
  }
  function copyText(v) {
    if (!isPlain(v)) return undefined;
    const out = {};
    bound += 2;
    for (const k in v) {
      const x = v[k];
      if (k !== 'text' || typeof x !== 'string' || !(x.length <= 21845 || utf8Bytes(x) <= 65536)) return undefined;
      out.text = x;
      bound += 6 * x.length + 2 + 6 * k.length + 4;
    }
    return hasOwn(out, 'text') ? out : undefined;
  }
  const shapeCopy = createObject(null);
  shapeCopy.series = copySeries;
  shapeCopy.categories = copyCategories;
  shapeCopy.table = copyTable;
  shapeCopy.text = copyText;
  // A shape named "check:" and its name is checked as before the fused
  // walk, by copy and then fits: for the tests that hold each copier to
  // them, and for make bench's figure of what the fusing saves.
  for (const name of objectKeys(shapeFits)) shapeFits['check:' + name] = shapeFits[name];

  // --- The driver: folds a page of events in one call.
  // views is JSON text; events is the events' JSON texts, one a line;
  // times is the JSON list of their times in ms; shapesText the JSON
  // object of the declared views, each name with its shape's name ("" to
  // leave its shape to Go, once a page); limit the most bytes the views
  // may take. It
  // answers a header line of JSON, a newline and the views as JSON text
  // (after the last event, or, on a stall at the first event, as given).
  function driver(fold, viewsText, eventsText, timesText, shapesText, limit) {
    let views = jsonParse(viewsText);
    const events = eventsText.split('\n');
    const times = jsonParse(timesText);
    const shapes = jsonParse(shapesText);
    const names = new Set(objectKeys(shapes));
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
      const ks = objectKeys(out);
      for (let j = 0; j < ks.length; j++) {
        if (!names.has(ks[j])) return stall(i, { n: i, kind: 'shape', error: 'the fold returned a view named ' + jsonStringify(ks[j]) + ', which data.views does not declare' });
      }
      // Each view copied, by its shape's copier or, when that declines,
      // by copy (and checked by fits below, once every view is copied and
      // the size known, as the page format orders the kinds of stall). A
      // copier that declines has added to bound what it had read: bound
      // only grows, and stays an upper bound.
      const next = {};
      let unchecked = null;
      bound = 2;
      bad = false;
      for (let j = 0; j < ks.length; j++) {
        const k = ks[j];
        const x = out[k];
        const fused = shapeCopy[shapes[k]];
        let y = fused === undefined ? undefined : fused(x);
        if (y === undefined) {
          y = copy(x, 1);
          if (bad) break;
          if (shapeFits[shapes[k]] !== undefined) (unchecked ??= []).push(k);
        }
        bound += 6 * k.length + 4;
        set(next, k, y);
      }
      if (bad) return stall(i, { n: i, kind: 'unfit', error: 'the fold returned ' + (unfit(out) || 'a value JSON cannot carry') });
      if (bound > limit) {
        const size = utf8Bytes(jsonStringify(next));
        if (size > limit) return stall(i, { n: i, kind: 'size', error: 'the views take ' + size + ' bytes as JSON, more than ' + limit });
      }
      if (unchecked !== null) {
        for (let j = 0; j < unchecked.length; j++) {
          const k = unchecked[j];
          if (!shapeFits[shapes[k]](next[k])) {
            // The views this fold returned go back, for Go to word the stall.
            return jsonStringify({ n: i, kind: 'shapecheck', error: 'view ' + k + ' does not match ' + shapes[k].replace('check:', '') }) + '\n' + jsonStringify(next);
          }
        }
      }
      views = next;
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
    const run = function (viewsText, eventsText, timesText, shapesText, limit) {
      return driver(fold, viewsText, eventsText, timesText, shapesText, limit);
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
