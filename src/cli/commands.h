// Each subcommand registers itself on the top-level app; the callback runs it.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace transduce {
struct TrainLog;
}

namespace transduce::cli {

void register_params(CLI::App& app);
void register_bench(CLI::App& app);
void register_average(CLI::App& app);
void register_quantize(CLI::App& app);
void register_vocab(CLI::App& app);
// `progress` (the Python module's train()) gets each record train_log.jsonl gets, after it.
void register_train(CLI::App& app, std::function<void(const TrainLog&)> progress = {});
void register_translate(CLI::App& app);
void register_score(CLI::App& app);
void register_score_pairs(CLI::App& app);
void register_serve(CLI::App& app);
void register_attention(CLI::App& app);
void register_parse(CLI::App& app);
void register_evalb(CLI::App& app);
void register_trees(CLI::App& app);
// `bench serve`, on the bench subcommand.
void register_bench_serve(CLI::App& bench);

}  // namespace transduce::cli
