// `nasd-loadgen plot results.csv [more.csv ...] out.png|out.svg`: response time against achieved
// throughput, one curve per CSV, drawn by gnuplot.
#pragma once

#include <string>
#include <vector>

namespace nasd::bench {

// The gnuplot program that draws `csvs` into `output` (terminal chosen by the extension: .png or
// .svg); throws std::invalid_argument for another extension or no input.
std::string gnuplot_script(const std::vector<std::string>& csvs, const std::string& output);

// Runs gnuplot on that script; returns gnuplot's exit status (or -1 if it could not be started).
int run_gnuplot(const std::vector<std::string>& csvs, const std::string& output, std::string* error);

}  // namespace nasd::bench
