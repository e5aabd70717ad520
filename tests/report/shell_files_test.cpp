// Tests of the shell files printed from a command tree's plain records: bash and zsh completion
// offer each command's subcommands, options and checked values, and the man page escapes what
// troff would read as its own syntax. The CLI's walk into these records is tested end to end
// with the real binary (tests/tools/shell_files_test.sh).
#include "report/shell_files.h"

#include <gtest/gtest.h>

namespace migscope::report {
namespace {

std::vector<CommandInfo> tree() {
    OptionInfo format;
    format.names = {"--format"};
    format.takes_value = true;
    format.type = "TEXT";
    format.choices = {"table", "json"};
    format.description = "output format: [table] or json: machine";
    OptionInfo db;
    db.names = {"--db"};
    db.takes_value = true;
    db.type = "PATH";
    db.description = ".the store, a \\ path - and 'quotes'";
    OptionInfo verbose;
    verbose.names = {"-v", "--verbose"};
    verbose.description = "say more";
    CommandInfo root;
    root.description = "migscope: should I split this GPU?";
    root.options = {verbose};
    root.subcommands = {"results"};
    root.subcommand_descriptions = {"stored runs: list, show"};
    CommandInfo results;
    results.path = {"results"};
    results.description = "stored runs";
    results.options = {format, db};
    return {root, results};
}

TEST(ShellFiles, BashOffersSubcommandsOptionsAndCheckedValues) {
    const std::string bash = bash_completion(tree());
    EXPECT_NE(bash.find("complete -F _migscope migscope"), std::string::npos);
    EXPECT_NE(bash.find("'results'"), std::string::npos) << bash;
    EXPECT_NE(bash.find("--format --db"), std::string::npos) << bash;
    EXPECT_NE(bash.find("choices table json"), std::string::npos) << bash;
    EXPECT_NE(bash.find("path"), std::string::npos);
}

TEST(ShellFiles, ZshEscapesWhatArgumentsReadsAsSyntax) {
    const std::string zsh = zsh_completion(tree());
    EXPECT_EQ(zsh.rfind("#compdef migscope", 0), 0u) << zsh.substr(0, 40);
    // Brackets would end an _arguments explanation: the description's become parentheses; the
    // first colon of a _describe entry ends its name, the description's own stay.
    EXPECT_NE(zsh.find("'--format=[output format: (table) or json: machine]:TEXT:(table json)'"),
              std::string::npos)
        << zsh;
    EXPECT_NE(zsh.find("'results:stored runs: list, show'"), std::string::npos) << zsh;
    EXPECT_NE(zsh.find("'\\''quotes'\\''"), std::string::npos)
        << "single quotes closed and reopened";
}

TEST(ShellFiles, TheManPageEscapesTroffSyntaxAndNamesTheVersion) {
    const std::string man = man_page(tree(), "9.9.9");
    EXPECT_EQ(man.find(".TH MIGSCOPE 1"), man.find(".TH")) << man.substr(0, 80);
    EXPECT_NE(man.find("9.9.9"), std::string::npos);
    EXPECT_NE(man.find("\\&.the store, a \\e path \\- and"), std::string::npos) << man;
    EXPECT_NE(man.find("\\-\\-format"), std::string::npos);
}

}  // namespace
}  // namespace migscope::report
