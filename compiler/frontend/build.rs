// Generates the parser from src/grammar.lalrpop at build time.
fn main() {
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .process_file("src/grammar.lalrpop")
        .expect("the fd grammar generates a parser");
}
