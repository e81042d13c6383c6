package io.agentbox.protocol;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The packages of this module's main code depend on each other one way only: every package,
 * nested ones included, is its own slice, and no chain of class dependencies leads from a slice
 * back to itself (docs/architecture.md#package-map).
 */
class PackageCyclesTest {

    @Test
    void packagesFormNoCycle() {
        JavaClasses main = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.agentbox.protocol");
        assertThat(main.contain(SandboxIds.class)).as("the module's compiled main classes were imported").isTrue();

        slices().matching("io.agentbox.(**)").should().beFreeOfCycles().check(main);
    }
}
