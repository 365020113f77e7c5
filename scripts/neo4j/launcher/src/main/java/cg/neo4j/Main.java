package cg.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import inet.ipaddr.IPAddressString;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * Runs a Neo4j Community DBMS in this JVM with only the Bolt connector, bound to 127.0.0.1.
 * Started (and stopped with SIGTERM) by scripts/neo4j/neo4j-server.
 *
 * Arguments: HOME_DIR BOLT_PORT
 * Environment:
 *   NEO4J_PASSWORD        password of user "neo4j" (re-applied at every start); ignored when auth is off
 *   CG_NEO4J_AUTH         "none" disables authentication (default: enabled)
 *   CG_NEO4J_PAGECACHE    page cache size in MiB (default 256)
 *   CG_NEO4J_CONF         optional neo4j.conf-style file with extra settings
 *
 * Prints "CG_NEO4J_READY <version> <port>" on stdout once the DBMS is up and the password is set.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            // Neo4j's non-daemon threads would keep a half-started JVM alive: exit instead
            // (the shutdown hook, if registered, stops the DBMS cleanly).
            System.out.println("CG_NEO4J_FAILED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Main HOME_DIR BOLT_PORT");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        boolean auth = !"none".equalsIgnoreCase(env("CG_NEO4J_AUTH", ""));
        String password = env("NEO4J_PASSWORD", "cgtestpass");
        long pageCacheMiB = Long.parseLong(env("CG_NEO4J_PAGECACHE", "256"));
        Files.createDirectories(home);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO));
        String extraConf = env("CG_NEO4J_CONF", "");
        if (!extraConf.isEmpty()) {
            builder.loadPropertiesFromFile(Path.of(extraConf));
        }
        builder.setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress("127.0.0.1"))
                .setConfig(GraphDatabaseSettings.default_advertised_address, new SocketAddress("127.0.0.1"))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMiB))
                // Small, non-preallocated transaction logs: the default preallocates 256 MiB
                // per database (neo4j + system) up front.
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "2 files")
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(32))
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Cypher reaches no file and no address: LOAD CSV may not read file:/// URLs, and
                // every outgoing URL load (LOAD CSV FROM 'http://...') is blocked, as in
                // docker/docker-compose.yml. cg never loads CSV; these close the server's own doors.
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
                .setConfig(GraphDatabaseInternalSettings.cypher_ip_blocklist,
                        List.of(new IPAddressString("0.0.0.0/0"), new IPAddressString("::/0")))
                // Bolt's netty event loops otherwise idle 5 s before shutting down: makes `stop` slow.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);

        DatabaseManagementService dbms = builder.build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("CG_NEO4J_STOPPING");
            try {
                dbms.shutdown();
            } finally {
                stopped.countDown();
            }
        }, "cg-neo4j-shutdown"));

        if (auth) {
            setPassword(dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME), password);
        }
        // Make sure the default database is really available before announcing readiness.
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        db.executeTransactionally("RETURN 1");

        String version = org.neo4j.kernel.internal.Version.getNeo4jVersion();
        System.out.println("CG_NEO4J_READY " + version + " " + port + " auth=" + (auth ? "on" : "off"));
        System.out.flush();
        stopped.await();
    }

    private static void setPassword(GraphDatabaseService system, String password) {
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $p CHANGE NOT REQUIRED", Map.of("p", password));
        } catch (RuntimeException e) {
            // Re-applying the current password is rejected ("Old password and new password cannot be
            // the same"); that is the common case on every start after the first one.
            String msg = String.valueOf(e.getMessage()) + " " + String.valueOf(e.getCause());
            if (!msg.contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null ? dflt : v;
    }
}
