//===- PtxModule.cpp - a parsed module and its kernels --------------------===//
//
// Owns the module's text (tokens point into it), its .global and .const
// variables (host memory, initialised, registered in GlobalMemory while the
// module lives) and its decoded functions. Each kernel's static shared
// memory holds the module-scope .shared variables it names and its own,
// each at its alignment; .extern .shared (dynamic) variables all start
// after them, at the larger of 16 and their alignment.
//
//===----------------------------------------------------------------------===//

#include "qfuse/sim/Ptx.h"

#include "Interpreter.h"
#include "PtxDecode.h"
#include "PtxLexer.h"
#include "PtxParser.h"

#include "qfuse/sim/GlobalMemory.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

namespace qfuse::sim {

PtxModule::~PtxModule() = default;

namespace {

using namespace ptx;

uint64_t alignUp(uint64_t v, uint64_t a) { return a ? (v + a - 1) / a * a : v; }

class ModuleImpl : public PtxModule {
public:
  ~ModuleImpl() override {
    for (void *p : owned) {
      GlobalMemory::instance().remove(p);
      std::free(p);
    }
  }

  bool build(std::string_view text, std::string &error);
  const Function *find(std::string_view name) const {
    for (const auto &f : functions)
      if (f->info.name == name)
        return f.get();
    return nullptr;
  }

  std::vector<std::unique_ptr<Function>> functions;

private:
  std::string source;
  std::vector<void *> owned;
  std::map<std::string, Symbol, std::less<>> globals;
  std::vector<VarDecl> moduleShared;

  bool allocate(const VarDecl &v, std::string &error);
  bool buildFunction(const FunctionSyntax &syn, std::string &error);
};

bool ModuleImpl::allocate(const VarDecl &v, std::string &error) {
  size_t align = v.align < 16 ? 16 : v.align;
  size_t bytes = alignUp(v.bytes ? v.bytes : 1, align);
  void *p = std::aligned_alloc(align, bytes);
  if (!p) {
    error = "line " + std::to_string(v.line) + ": cannot allocate " + v.name;
    return false;
  }
  std::memset(p, 0, bytes);
  if (!v.init.empty())
    std::memcpy(p, v.init.data(), v.init.size() < v.bytes ? v.init.size() : v.bytes);
  owned.push_back(p);
  if (v.bytes)
    GlobalMemory::instance().add(p, v.bytes, "module variable " + v.name);
  globals[v.name] = Symbol{Symbol::Global, uint64_t(uintptr_t(p))};
  return true;
}

bool ModuleImpl::buildFunction(const FunctionSyntax &syn, std::string &error) {
  auto fn = std::make_unique<Function>();
  fn->isEntry = syn.isEntry;
  fn->info.name = syn.name;
  fn->info.params = syn.params;
  fn->info.paramBytes = syn.paramBytes;
  std::map<std::string, Symbol, std::less<>> symbols = globals;
  for (const KernelParam &p : syn.params)
    symbols[p.name] = Symbol{Symbol::Param, p.offset};
  // Static shared: module-scope variables this function names, then its own.
  std::unordered_set<std::string_view> named(syn.names.begin(),
                                             syn.names.end());
  uint64_t offset = 0, localOffset = 0;
  std::vector<const VarDecl *> dynamic;
  auto place = [&](const VarDecl &v) {
    if (v.space == Space::Local) {
      localOffset = alignUp(localOffset, v.align);
      symbols[v.name] = Symbol{Symbol::Local, localOffset};
      localOffset += v.bytes;
    } else if (v.isExtern || v.bytes == 0) {
      dynamic.push_back(&v);
    } else {
      offset = alignUp(offset, v.align);
      symbols[v.name] = Symbol{Symbol::Shared, offset};
      offset += v.bytes;
    }
  };
  for (const VarDecl &v : moduleShared)
    if (named.count(v.name))
      place(v);
  for (const VarDecl &v : syn.vars)
    place(v);
  uint32_t dynAlign = 16;
  for (const VarDecl *v : dynamic)
    dynAlign = v->align > dynAlign ? v->align : dynAlign;
  for (const VarDecl *v : dynamic)
    symbols[v->name] = Symbol{Symbol::Shared, alignUp(offset, dynAlign)};
  fn->staticSharedBytes = uint32_t(offset);
  fn->dynamicSharedAlign = dynAlign;
  fn->localBytes = uint32_t(localOffset);
  fn->info.staticSharedBytes = uint32_t(offset);
  fn->info.numRegs = syn.numRegs;
  uint64_t maxThreads = 1024;
  if (syn.maxntid[0])
    maxThreads = uint64_t(syn.maxntid[0]) * syn.maxntid[1] * syn.maxntid[2];
  if (syn.reqntid[0])
    maxThreads = uint64_t(syn.reqntid[0]) * syn.reqntid[1] * syn.reqntid[2];
  fn->info.maxThreads = uint32_t(maxThreads < 1024 ? maxThreads : 1024);
  std::memcpy(fn->reqCluster, syn.reqCluster, sizeof fn->reqCluster);
  Decoder decoder(syn, *fn, symbols);
  if (!decoder.decodeAll()) {
    error = "function " + syn.name + ": " + decoder.error;
    return false;
  }
  functions.push_back(std::move(fn));
  return true;
}

bool ModuleImpl::build(std::string_view text, std::string &error) {
  source.assign(text.data(), text.size());
  std::vector<Token> tokens;
  ModuleSyntax syntax;
  if (!lexPtx(source, tokens, error) || !parsePtx(tokens, syntax, error))
    return false;
  for (const VarDecl &v : syntax.vars) {
    if (v.space == Space::Shared)
      moduleShared.push_back(v);
    else if (!v.isExtern && !allocate(v, error))
      return false;
  }
  for (const FunctionSyntax &f : syntax.functions)
    if (!buildFunction(f, error))
      return false;
  return true;
}

} // namespace

std::unique_ptr<PtxModule> PtxModule::parse(std::string_view text,
                                            std::string &error) {
  error.clear();
  auto module = std::make_unique<ModuleImpl>();
  if (!module->build(text, error))
    return nullptr;
  return module;
}

const KernelInfo *PtxModule::kernel(std::string_view name) const {
  const Function *f = static_cast<const ModuleImpl *>(this)->find(name);
  return f && f->isEntry ? &f->info : nullptr;
}

std::vector<std::string> PtxModule::kernelNames() const {
  std::vector<std::string> names;
  for (const auto &f : static_cast<const ModuleImpl *>(this)->functions)
    if (f->isEntry)
      names.push_back(f->info.name);
  return names;
}

std::vector<std::string> PtxModule::unsupportedOpcodes() const {
  std::vector<std::string> names;
  for (const auto &f : static_cast<const ModuleImpl *>(this)->functions)
    for (const Instr &in : f->code)
      if (in.ctl == Ctl::Unsupported &&
          std::find(names.begin(), names.end(), f->opcodes[in.text]) ==
              names.end())
        names.push_back(f->opcodes[in.text]);
  return names;
}

std::string PtxModule::launch(std::string_view kernel,
                              const LaunchConfig &config,
                              void **params) const {
  const Function *f = static_cast<const ModuleImpl *>(this)->find(kernel);
  if (!f || !f->isEntry)
    return "no kernel named " + std::string(kernel) + " in the module";
  std::vector<uint8_t> buffer(f->info.paramBytes ? f->info.paramBytes : 1);
  if (!f->info.params.empty() && !params)
    return "kernel " + f->info.name + ": no parameters given";
  for (size_t i = 0; i < f->info.params.size(); ++i) {
    const KernelParam &p = f->info.params[i];
    if (!params[i])
      return "kernel " + f->info.name + ": parameter " + p.name + " is null";
    std::memcpy(buffer.data() + p.offset, params[i], p.size);
  }
  // QFUSE_SIM_STATS=1: thread-instructions and rate of every launch.
  static const bool stats = std::getenv("QFUSE_SIM_STATS") != nullptr;
  auto start = std::chrono::steady_clock::now();
  uint64_t count = 0;
  std::string result =
      ptx::runGrid(*f, config, buffer.data(), f->info.paramBytes, &count);
  if (stats) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    std::fprintf(stderr,
                 "qfuse-sim: %s: %llu thread-instructions in %.3f s (%.1f M/s)\n",
                 f->info.name.c_str(), (unsigned long long)count, s,
                 s > 0 ? count / s / 1e6 : 0.0);
  }
  return result;
}

} // namespace qfuse::sim
