// cg's precise pass for Java: JavaParser's symbol solver says what each call in the repository's Java
// files names. Usage: CgJavaResolve <repository root> <output file> <files to answer> <all Java files>
// (the two lists: files of repository-relative paths, one per line). Writes one line per answered call,
// tab-separated: the file, the 1-based line and the 0-based column (UTF-16 units) of the called name,
// then "D", the file and the 1-based line of the definition's name, and its name (a definition in the
// repository), or "E", the qualified name and 0 and the name (a JDK or library member), and last the
// line of the constructor a `new` runs (0: none named, or not a `new`); and before a file's calls one
// line "<file> 0 0 F" that says the file was read.
//
// Nothing of the repository runs: JavaParser parses its sources, the symbol solver reads those
// sources and the JDK's own classes (never the repository's), and no annotation processor, build
// tool or compiler plugin is involved. A call the solver cannot answer (a library not on hand, a
// construct it does not model) is left out, and cg's own resolver answers it.
import com.github.javaparser.JavaParser;
import com.github.javaparser.ParseResult;
import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.Position;
import com.github.javaparser.ast.CompilationUnit;
import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.expr.MethodCallExpr;
import com.github.javaparser.ast.expr.ObjectCreationExpr;
import com.github.javaparser.ast.expr.SimpleName;
import com.github.javaparser.ast.nodeTypes.NodeWithSimpleName;
import com.github.javaparser.resolution.declarations.ResolvedConstructorDeclaration;
import com.github.javaparser.resolution.declarations.ResolvedMethodDeclaration;
import com.github.javaparser.resolution.declarations.ResolvedReferenceTypeDeclaration;
import com.github.javaparser.symbolsolver.JavaSymbolSolver;
import com.github.javaparser.symbolsolver.resolution.typesolvers.CombinedTypeSolver;
import com.github.javaparser.symbolsolver.resolution.typesolvers.JavaParserTypeSolver;
import com.github.javaparser.symbolsolver.resolution.typesolvers.ReflectionTypeSolver;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class CgJavaResolve {
    private static final Pattern PACKAGE = Pattern.compile("(?m)^\\s*package\\s+([\\w.]+)\\s*;");

    private final Path root;
    private final JavaParser parser;

    private CgJavaResolve(Path root, List<String> every) throws IOException {
        this.root = root;
        ParserConfiguration plain = new ParserConfiguration().setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_21);
        CombinedTypeSolver solver = new CombinedTypeSolver(new ReflectionTypeSolver(true));
        for (Path sourceRoot : sourceRoots(root, every)) {
            solver.add(new JavaParserTypeSolver(sourceRoot, plain));
        }
        ParserConfiguration config = new ParserConfiguration()
                .setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_21)
                .setSymbolResolver(new JavaSymbolSolver(solver));
        this.parser = new JavaParser(config);
    }

    /** The folders that hold packages: each file's folder less its package's path. */
    private static Set<Path> sourceRoots(Path root, List<String> every) {
        Set<Path> roots = new LinkedHashSet<>();
        for (String rel : every) {
            Path file = root.resolve(rel).normalize();
            if (!file.startsWith(root)) {
                continue;
            }
            String head;
            try {
                byte[] data = Files.readAllBytes(file);
                head = new String(data, 0, Math.min(data.length, 20000), StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                continue;
            }
            Matcher m = PACKAGE.matcher(head);
            Path folder = file.getParent();
            if (m.find()) {
                for (String ignored : m.group(1).split("\\.")) {
                    folder = folder == null ? null : folder.getParent();
                }
            }
            if (folder != null && folder.startsWith(root)) {
                roots.add(folder);
            }
        }
        return roots;
    }

    private void answer(String rel, BufferedWriter out) throws IOException {
        if (rel.contains("\t") || rel.contains("\n")) {
            return;
        }
        Path file = root.resolve(rel).normalize();
        if (!file.startsWith(root)) {
            return;
        }
        ParseResult<CompilationUnit> parsed;
        try {
            parsed = parser.parse(file);
        } catch (IOException | RuntimeException | StackOverflowError e) {
            return;
        }
        Optional<CompilationUnit> unit = parsed.getResult();
        if (unit.isEmpty()) {
            return;
        }
        out.write(rel + "\t0\t0\tF\t\t0\t\t0\n"); // read: its calls follow, those the solver answered
        for (MethodCallExpr call : unit.get().findAll(MethodCallExpr.class)) {
            try {
                ResolvedMethodDeclaration method = call.resolve();
                Optional<Node> ast = method.toAst();
                String external = method.declaringType().getQualifiedName() + "." + method.getName();
                write(out, rel, call.getName(), ast, external, method.getName(), 0);
            } catch (RuntimeException | StackOverflowError e) {
                // unanswered: cg's own resolver takes the call
            }
        }
        for (ObjectCreationExpr made : unit.get().findAll(ObjectCreationExpr.class)) {
            if (made.getAnonymousClassBody().isPresent()) {
                continue;
            }
            try {
                ResolvedConstructorDeclaration constructor = made.resolve();
                ResolvedReferenceTypeDeclaration type = constructor.declaringType();
                int line = constructor.toAst()
                        .flatMap(node -> node instanceof NodeWithSimpleName<?> n ? n.getName().getBegin() : node.getBegin())
                        .map(position -> position.line)
                        .orElse(0); // 0: the implicit constructor, or one outside the repository
                write(out, rel, made.getType().getName(), type.toAst(), type.getQualifiedName(), type.getName(), line);
            } catch (RuntimeException | StackOverflowError e) {
                // unanswered
            }
        }
    }

    private void write(
            BufferedWriter out, String rel, SimpleName at, Optional<Node> ast, String external, String name, int constructor)
            throws IOException {
        Optional<Position> where = at.getBegin();
        if (where.isEmpty() || name.contains("\t") || name.contains("\n")) {
            return;
        }
        String head = rel + "\t" + where.get().line + "\t" + (where.get().column - 1) + "\t";
        if (ast.isPresent()) {
            Node node = ast.get();
            Optional<Path> path = node.findCompilationUnit().flatMap(CompilationUnit::getStorage)
                    .map(storage -> storage.getPath().toAbsolutePath().normalize());
            Optional<Position> named = node instanceof NodeWithSimpleName<?> n ? n.getName().getBegin() : node.getBegin();
            if (path.isEmpty() || named.isEmpty() || !path.get().startsWith(root)) {
                return; // declared in the repository, but not where cg can point
            }
            String defined = root.relativize(path.get()).toString().replace('\\', '/');
            if (defined.contains("\t") || defined.contains("\n")) {
                return;
            }
            out.write(head + "D\t" + defined + "\t" + named.get().line + "\t" + name + "\t" + constructor + "\n");
        } else if (!external.contains("\t") && !external.contains("\n")) {
            out.write(head + "E\t" + external + "\t0\t" + name + "\t0\n");
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: cg-javaparser <repository root> <output> <files to answer> <all Java files>");
            System.exit(2);
        }
        Path root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<String> wanted = Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8);
        List<String> every = Files.readAllLines(Paths.get(args[3]), StandardCharsets.UTF_8);
        CgJavaResolve resolver = new CgJavaResolve(root, every);
        Path output = Paths.get(args[1]);
        Path partial = output.resolveSibling(output.getFileName() + ".partial");
        try (BufferedWriter out = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
            for (String rel : wanted) {
                if (!rel.isEmpty()) {
                    resolver.answer(rel, out);
                }
            }
        }
        Files.move(partial, output);
    }
}
