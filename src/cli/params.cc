// `transduce params`: the parameter count of a configuration (Table 3's last column).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "model/transformer.h"

namespace transduce::cli {

void register_params(CLI::App& app) {
  auto flags = std::make_shared<ModelChoice>();
  auto build = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("params", "print the parameter count of a model configuration");
  add_model_flags(*cmd, *flags);
  cmd->add_flag("--build", *build, "build the model and count its tensors instead of the formula");
  cmd->callback([flags, build] {
    ModelConfig c = resolve_model(*flags);
    int64_t count = c.parameter_count();
    if (*build) {
      Transformer model(c);
      count = 0;
      for (const Param* p : model.parameters()) count += p->value.numel();
    }
    fmt::print("{}\n", count);
    fmt::print(
        "# layers {} d_model {} d_ff {} heads {} d_k {} d_v {} vocab {} positions {} norm {} "
        "({:.1f}M)\n",
        c.layers, c.d_model, c.d_ff, c.heads, c.d_k, c.d_v, c.vocab_size,
        positions_name(c.positions), norm_name(c.norm), count / 1e6);
  });
}

}  // namespace transduce::cli
