//===- PtxParser.cpp - PTX tokens to declarations and statements ----------===//

#include "PtxParser.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace qfuse::sim::ptx {
namespace {

/// Bytes of a PTX scalar type (.b8 ... .f64, .pred), or 0.
uint32_t typeBytes(std::string_view t) {
  if (t.size() < 3 || t[0] != '.')
    return 0;
  if (t == ".pred")
    return 1;
  char k = t[1];
  if (k != 'b' && k != 'u' && k != 's' && k != 'f')
    return 0;
  if (t == ".f16x2" || t == ".bf16x2")
    return 4;
  std::string_view digits = t.substr(t[1] == 'b' && t[2] == 'f' ? 3 : 2);
  if (digits == "8")
    return 1;
  if (digits == "16")
    return 2;
  if (digits == "32")
    return 4;
  if (digits == "64")
    return 8;
  return 0;
}

class Parser {
public:
  Parser(const std::vector<Token> &tokens, ModuleSyntax &module,
         std::string &error)
      : toks(tokens), mod(module), err(error) {}

  bool parseModule();

private:
  const std::vector<Token> &toks;
  ModuleSyntax &mod;
  std::string &err;
  size_t pos = 0;

  const Token &peek(size_t ahead = 0) const {
    size_t i = pos + ahead;
    return toks[i < toks.size() ? i : toks.size() - 1];
  }
  const Token &next() {
    const Token &t = peek();
    if (pos < toks.size() - 1)
      ++pos;
    return t;
  }
  bool fail(const std::string &what) {
    if (err.empty())
      err = "line " + std::to_string(peek().line) + ": " + what + " (at '" +
            std::string(peek().text) + "')";
    return false;
  }
  bool expect(char c) {
    if (!peek().is(c))
      return fail(std::string("expected '") + c + "'");
    next();
    return true;
  }
  bool number(uint64_t &out) {
    Number n;
    if (peek().kind != Tok::Number || !parseNumber(peek().text, false, n) ||
        n.kind != Number::Int)
      return fail("expected an integer");
    next();
    out = n.bits;
    return true;
  }
  void skipLine() {
    uint32_t line = peek().line;
    while (peek().kind != Tok::End && peek().line == line)
      next();
  }
  void skipPast(char c) {
    while (peek().kind != Tok::End && !peek().is(c))
      next();
    next();
  }

  bool parseVar(VarDecl &v);
  bool parseInit(VarDecl &v);
  bool parseFunction(bool isEntry);
  bool parseParams(FunctionSyntax &fn, bool record);
  bool parseDirectives(FunctionSyntax &fn);
  bool parseBody(FunctionSyntax &fn, uint32_t scope);
  bool parseReg(FunctionSyntax &fn, uint32_t scope);
  bool parseTargetList(FunctionSyntax &fn, uint32_t scope);
  bool parseStatement(FunctionSyntax &fn, uint32_t scope);
  bool parseOperand(FunctionSyntax &fn, Operand &op);
  bool parseAddress(FunctionSyntax &fn, Operand &op);
  bool dims(uint32_t *out);
};

bool Parser::parseModule() {
  while (peek().kind != Tok::End) {
    const Token &t = peek();
    if (t.is(".version") || t.is(".target") || t.is(".address_size") ||
        t.is(".file") || t.is(".loc")) {
      skipLine();
    } else if (t.is(".pragma")) {
      skipPast(';');
    } else if (t.is(".section")) {
      skipLine();
      if (peek().is('{'))
        skipPast('}');
    } else if (t.is(".visible") || t.is(".weak") || t.is(".common")) {
      next();
    } else if (t.is(".extern")) {
      next();
      if (peek().is(".shared") || peek().is(".global") || peek().is(".const")) {
        VarDecl v;
        v.isExtern = true;
        if (!parseVar(v))
          return false;
        mod.vars.push_back(std::move(v));
      }
    } else if (t.is(".entry") || t.is(".func")) {
      if (!parseFunction(t.is(".entry")))
        return false;
    } else if (t.is(".global") || t.is(".const") || t.is(".shared")) {
      VarDecl v;
      if (!parseVar(v))
        return false;
      mod.vars.push_back(std::move(v));
    } else {
      return fail("unexpected at module scope");
    }
  }
  return true;
}

bool Parser::parseVar(VarDecl &v) {
  const Token &space = next();
  v.line = space.line;
  v.space = space.is(".global")  ? Space::Global
            : space.is(".const") ? Space::Const
            : space.is(".local") ? Space::Local
                                 : Space::Shared;
  uint32_t vecN = 1;
  for (;;) {
    const Token &t = peek();
    if (t.is(".align")) {
      next();
      uint64_t a = 0;
      if (!number(a))
        return false;
      v.align = uint32_t(a);
    } else if (t.is(".v2") || t.is(".v4") || t.is(".v8")) {
      vecN = t.text[2] - '0';
      next();
    } else if (t.kind == Tok::Ident && t.text[0] == '.') {
      uint32_t b = typeBytes(t.text);
      if (!b && !t.is(".ptr"))
        return fail("unknown variable attribute");
      if (b)
        v.elemBytes = b * vecN;
      next();
    } else {
      break;
    }
  }
  if (peek().kind != Tok::Ident)
    return fail("expected a variable name");
  v.name = std::string(next().text);
  if (v.align < v.elemBytes && v.align == 1)
    v.align = v.elemBytes;
  uint64_t count = 1;
  while (peek().is('[')) {
    next();
    if (peek().is(']')) {
      count = 0; // unsized: dynamic shared, or sized by the initialiser
    } else {
      uint64_t d = 0;
      if (!number(d))
        return false;
      count *= d;
    }
    if (!expect(']'))
      return false;
  }
  v.bytes = count * v.elemBytes;
  if (peek().is('=')) {
    next();
    if (!parseInit(v))
      return false;
    if (v.bytes == 0)
      v.bytes = v.init.size();
    v.init.resize(v.bytes);
  }
  return expect(';');
}

bool Parser::parseInit(VarDecl &v) {
  // Scalars and (nested) brace lists of numbers, each element elemBytes.
  int depth = 0;
  do {
    if (peek().is('{')) {
      next();
      ++depth;
      continue;
    }
    if (peek().is('}')) {
      next();
      --depth;
    } else {
      bool neg = false;
      if (peek().is('-')) {
        neg = true;
        next();
      }
      Number n;
      if (peek().kind != Tok::Number || !parseNumber(peek().text, neg, n))
        return fail("unsupported initialiser");
      next();
      uint64_t bits = n.bits;
      if (n.kind == Number::Float) {
        if (v.elemBytes == 4) {
          float f = float(n.value);
          uint32_t u;
          std::memcpy(&u, &f, 4);
          bits = u;
        } else {
          std::memcpy(&bits, &n.value, 8);
        }
      }
      for (uint32_t b = 0; b < v.elemBytes; ++b)
        v.init.push_back(uint8_t(bits >> (8 * b)));
    }
    if (peek().is(','))
      next();
  } while (depth > 0);
  return true;
}

bool Parser::dims(uint32_t *out) {
  for (int i = 0; i < 3; ++i) {
    uint64_t d = 0;
    if (!number(d))
      return false;
    out[i] = uint32_t(d);
    if (!peek().is(','))
      break;
    next();
  }
  for (int i = 0; i < 3; ++i)
    if (!out[i])
      out[i] = 1;
  return true;
}

bool Parser::parseParams(FunctionSyntax &fn, bool record) {
  if (!expect('('))
    return false;
  while (!peek().is(')')) {
    if (!peek().is(".param") && !peek().is(".reg"))
      return fail("expected .param");
    next();
    uint32_t align = 0, bytes = 0;
    // `.ptr .space .align N` states the pointee's alignment, not the
    // parameter's (a pointer is aligned to its size).
    bool pointer = false;
    while (peek().kind == Tok::Ident && peek().text[0] == '.') {
      const Token &t = next();
      if (t.is(".ptr")) {
        pointer = true;
      } else if (t.is(".align")) {
        uint64_t a = 0;
        if (!number(a))
          return false;
        if (!pointer)
          align = uint32_t(a);
      } else if (uint32_t b = typeBytes(t.text)) {
        bytes = b;
      }
    }
    if (peek().kind != Tok::Ident)
      return fail("expected a parameter name");
    std::string name(next().text);
    uint64_t count = 1;
    if (peek().is('[')) {
      next();
      if (!number(count) || !expect(']'))
        return false;
    }
    bytes *= uint32_t(count);
    if (!align)
      align = bytes / uint32_t(count);
    if (!align)
      align = 1;
    if (record) {
      uint32_t offset = (fn.paramBytes + align - 1) / align * align;
      fn.params.push_back(KernelParam{name, offset, bytes});
      fn.paramBytes = offset + bytes;
    }
    if (peek().is(','))
      next();
  }
  return expect(')');
}

bool Parser::parseDirectives(FunctionSyntax &fn) {
  for (;;) {
    const Token &t = peek();
    if (t.is(".maxntid")) {
      next();
      if (!dims(fn.maxntid))
        return false;
    } else if (t.is(".reqntid")) {
      next();
      if (!dims(fn.reqntid))
        return false;
    } else if (t.is(".reqnctapercluster")) {
      next();
      if (!dims(fn.reqCluster))
        return false;
    } else if (t.is(".minnctapersm") || t.is(".maxnreg") ||
               t.is(".maxclusterrank") || t.is(".maxnctapersm")) {
      next();
      uint64_t ignored = 0;
      if (!number(ignored))
        return false;
    } else if (t.is(".explicitcluster") || t.is(".noreturn") ||
               t.is(".blocksareclusters")) {
      next();
    } else if (t.is(".pragma")) {
      skipPast(';');
    } else {
      return true;
    }
  }
}

bool Parser::parseFunction(bool isEntry) {
  FunctionSyntax fn;
  fn.isEntry = isEntry;
  fn.line = next().line;
  if (!isEntry && peek().is('(')) { // return parameters
    FunctionSyntax ignored;
    if (!parseParams(ignored, false))
      return false;
  }
  if (peek().kind != Tok::Ident)
    return fail("expected a function name");
  fn.name = std::string(next().text);
  if (peek().is('(') && !parseParams(fn, true))
    return false;
  if (!parseDirectives(fn))
    return false;
  if (peek().is(';')) { // a prototype
    next();
    return true;
  }
  if (!expect('{'))
    return false;
  fn.scopes.emplace_back();
  if (!parseBody(fn, 0))
    return false;
  mod.functions.push_back(std::move(fn));
  return true;
}

bool Parser::parseBody(FunctionSyntax &fn, uint32_t scope) {
  for (;;) {
    const Token &t = peek();
    if (t.kind == Tok::End)
      return fail("unterminated function body");
    if (t.is('}')) {
      next();
      return true;
    }
    if (t.is('{')) {
      next();
      fn.scopes.emplace_back();
      fn.scopes.back().parent = scope;
      if (!parseBody(fn, uint32_t(fn.scopes.size() - 1)))
        return false;
    } else if (t.is(".reg")) {
      if (!parseReg(fn, scope))
        return false;
    } else if (t.is(".shared") || t.is(".local")) {
      VarDecl v;
      if (!parseVar(v))
        return false;
      fn.vars.push_back(std::move(v));
    } else if (t.is(".param")) {
      skipPast(';');
    } else if (t.is(".pragma")) {
      skipPast(';');
    } else if (t.is(".loc") || t.is(".file")) {
      skipLine();
    } else if (t.kind == Tok::Ident && peek(1).is(':') &&
               peek(2).is(".branchtargets")) {
      if (!parseTargetList(fn, scope))
        return false;
    } else if (t.kind == Tok::Ident && peek(1).is(':')) {
      fn.scopes[scope].labels[std::string(t.text)] =
          uint32_t(fn.statements.size());
      next();
      next();
    } else if (!parseStatement(fn, scope)) {
      return false;
    }
  }
}

/// `L: .branchtargets A, B, ...;`: the labels brx.idx through L picks from.
bool Parser::parseTargetList(FunctionSyntax &fn, uint32_t scope) {
  std::vector<std::string> &list =
      fn.scopes[scope].targetLists[std::string(next().text)];
  next(); // :
  next(); // .branchtargets
  for (;;) {
    if (peek().kind != Tok::Ident)
      return fail("expected a label in .branchtargets");
    list.emplace_back(next().text);
    if (!peek().is(','))
      break;
    next();
  }
  return expect(';');
}

bool Parser::parseReg(FunctionSyntax &fn, uint32_t scope) {
  next(); // .reg
  while (peek().kind == Tok::Ident && peek().text[0] == '.')
    next(); // the type, .v2 ...
  for (;;) {
    if (peek().kind != Tok::Ident)
      return fail("expected a register name");
    std::string name(next().text);
    if (peek().is('<')) {
      next();
      uint64_t count = 0;
      if (!number(count) || !expect('>'))
        return false;
      fn.scopes[scope].ranges.push_back(
          FunctionSyntax::RegRange{name, uint32_t(count), fn.numRegs});
      fn.numRegs += uint32_t(count);
    } else {
      fn.scopes[scope].regs[name] = fn.numRegs++;
    }
    if (!peek().is(','))
      break;
    next();
  }
  return expect(';');
}

bool Parser::parseStatement(FunctionSyntax &fn, uint32_t scope) {
  Statement s;
  s.scope = scope;
  s.line = peek().line;
  if (peek().is('@')) {
    next();
    if (peek().is('!')) {
      s.guardNeg = true;
      next();
    }
    if (peek().kind != Tok::Ident)
      return fail("expected a guard predicate");
    s.guard = next().text;
  }
  if (peek().kind != Tok::Ident)
    return fail("expected an instruction");
  s.opcode = next().text;
  while (!peek().is(';')) {
    Operand op;
    if (!parseOperand(fn, op))
      return false;
    s.ops.push_back(std::move(op));
    if (peek().is(','))
      next();
    else if (!peek().is(';'))
      return fail("expected ',' or ';'");
  }
  next();
  fn.statements.push_back(std::move(s));
  return true;
}

bool Parser::parseAddress(FunctionSyntax &fn, Operand &op) {
  op.kind = Operand::Address;
  if (peek().kind == Tok::Ident) {
    op.text = next().text;
    fn.names.push_back(op.text);
  }
  while (peek().is('+') || peek().is('-') || peek().kind == Tok::Number) {
    bool neg = false;
    while (peek().is('+') || peek().is('-'))
      neg ^= next().is('-');
    Number n;
    if (peek().kind != Tok::Number || !parseNumber(peek().text, neg, n) ||
        n.kind != Number::Int)
      return fail("bad address offset");
    next();
    op.offset += int64_t(n.bits);
  }
  return expect(']');
}

bool Parser::parseOperand(FunctionSyntax &fn, Operand &op) {
  const Token &t = peek();
  if (t.is('[')) {
    next();
    return parseAddress(fn, op);
  }
  if (t.is('{')) {
    next();
    op.kind = Operand::Vector;
    while (!peek().is('}')) {
      Operand e;
      if (!parseOperand(fn, e))
        return false;
      op.elems.push_back(std::move(e));
      if (peek().is(','))
        next();
      else if (!peek().is('}'))
        return fail("expected ',' or '}'");
    }
    next();
    return true;
  }
  if (t.is('!') || t.is('-')) {
    op.negated = true;
    next();
  }
  const Token &v = next();
  if (v.kind == Tok::Number) {
    op.kind = Operand::Number;
  } else if (v.kind == Tok::Ident) {
    op.kind = v.text == "_" ? Operand::Sink : Operand::Name;
    fn.names.push_back(v.text);
    if (peek().is('|')) { // d|p: a second, predicate destination
      next();
      Operand pred;
      if (!parseOperand(fn, pred))
        return false;
      op.elems.push_back(std::move(pred));
    }
  } else {
    --pos;
    return fail("expected an operand");
  }
  op.text = v.text;
  return true;
}

} // namespace

bool parsePtx(const std::vector<Token> &tokens, ModuleSyntax &module,
              std::string &error) {
  return Parser(tokens, module, error).parseModule();
}

} // namespace qfuse::sim::ptx
