/*
 * ksp_ex2.c - a plain PETSc program in the manner of PETSc's KSP tutorial
 * ex2: the 5-point Laplacian on an m x n grid (distributed by rows), exact
 * solution all ones, KSP and PC from the options database. It knows nothing
 * of ATA: the tests load the plugin into it with
 *   -dll_append build/libata_petsc.so -pc_factor_mat_solver_type ata
 * Options of its own: -m, -n (grid), -zero_pivot (A(0,0) = 0: ILU(0) meets a
 * zero pivot in row 0), -indefinite (the diagonal of the middle row made
 * -4: A and its ILU(0) indefinite, CG stops on it), -resolve (then A + I,
 * same pattern, new values: a numeric refactorisation, solved again),
 * -matsolve (one rank, -pc_type ilu/icc: MatMatSolve on 3 right-hand sides
 * against MatSolve column by column; prints the largest difference),
 * -convect (west and south neighbours -1.5, east and north -0.5: A
 * nonsymmetric), -transpose (KSPSolveTranspose on A^T x = A^T u: the PC's
 * MatSolveTranspose). Prints one line: iterations, reason, error norm.
 */
#include <petscksp.h>

static const char help[] = "5-point Laplacian solved by KSP (tests of the ATA plugin).\n";

int main(int argc, char **argv)
{
    Mat A;
    Vec x, b, u;
    KSP ksp;
    PetscInt m = 32, n = 32, Istart, Iend, its;
    PetscBool zero_pivot = PETSC_FALSE, indefinite = PETSC_FALSE, resolve = PETSC_FALSE, matsolve = PETSC_FALSE;
    PetscBool convect = PETSC_FALSE, transpose = PETSC_FALSE;
    PetscReal err;
    KSPConvergedReason reason;

    PetscCall(PetscInitialize(&argc, &argv, NULL, help));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-zero_pivot", &zero_pivot, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-indefinite", &indefinite, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-resolve", &resolve, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-matsolve", &matsolve, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-convect", &convect, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-transpose", &transpose, NULL));

    PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
    PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, m * n, m * n));
    PetscCall(MatSetFromOptions(A));
    PetscCall(MatMPIAIJSetPreallocation(A, 5, NULL, 5, NULL));
    PetscCall(MatSeqAIJSetPreallocation(A, 5, NULL));
    PetscCall(MatGetOwnershipRange(A, &Istart, &Iend));
    for (PetscInt r = Istart; r < Iend; r++) {
        PetscInt i = r / n, j = r - i * n;
        PetscScalar off = -1.0, diag = (indefinite && r == m * n / 2) ? -4.0 : 4.0;
        PetscScalar up = convect ? -1.5 : off, down = convect ? -0.5 : off;   /* upwind, downwind */
        if (i > 0) PetscCall(MatSetValue(A, r, r - n, up, INSERT_VALUES));
        if (i < m - 1) PetscCall(MatSetValue(A, r, r + n, down, INSERT_VALUES));
        if (j > 0) PetscCall(MatSetValue(A, r, r - 1, up, INSERT_VALUES));
        if (j < n - 1) PetscCall(MatSetValue(A, r, r + 1, down, INSERT_VALUES));
        PetscCall(MatSetValue(A, r, r, (zero_pivot && r == 0) ? 0.0 : diag, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));

    PetscCall(MatCreateVecs(A, &u, &b));
    PetscCall(VecDuplicate(b, &x));
    PetscCall(VecSet(u, 1.0));
    if (transpose) PetscCall(MatMultTranspose(A, u, b));
    else PetscCall(MatMult(A, u, b));

    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    PetscCall(KSPSetFromOptions(ksp));
    for (int pass = 0; pass < (resolve ? 2 : 1); pass++) {
        if (pass) { /* new values, same pattern: the PC refactors without a new symbolic phase */
            PetscCall(MatShift(A, 1.0));
            PetscCall(MatMult(A, u, b));
            PetscCall(KSPSetOperators(ksp, A, A));
        }
        if (transpose) PetscCall(KSPSolveTranspose(ksp, b, x));
        else PetscCall(KSPSolve(ksp, b, x));
        PetscCall(KSPGetIterationNumber(ksp, &its));
        PetscCall(KSPGetConvergedReason(ksp, &reason));
        PetscCall(VecAXPY(x, -1.0, u));
        PetscCall(VecNorm(x, NORM_2, &err));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ksp_ex2: iterations %d reason %s error %.6e\n", (int)its,
                              KSPConvergedReasons[reason], (double)err));
    }

    if (matsolve) { /* the factor of the PC: 3 columns at once vs one by one */
        PC pc;
        Mat F, B, X;
        Vec bk, xk;
        PetscReal diff = 0;
        PetscInt N;
        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(PCFactorGetMatrix(pc, &F));
        PetscCall(MatGetSize(A, &N, NULL));
        PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, N, 3, NULL, &B));
        PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, N, 3, NULL, &X));
        for (PetscInt i = 0; i < N; i++)
            for (PetscInt k = 0; k < 3; k++) PetscCall(MatSetValue(B, i, k, 1.0 + k * (PetscScalar)(i % 7), INSERT_VALUES));
        PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatMatSolve(F, B, X));
        PetscCall(VecDuplicate(b, &xk));
        for (PetscInt k = 0; k < 3; k++) {
            PetscReal e;
            PetscCall(MatDenseGetColumnVecRead(B, k, &bk));
            PetscCall(MatSolve(F, bk, xk));
            PetscCall(MatDenseRestoreColumnVecRead(B, k, &bk));
            PetscCall(MatDenseGetColumnVecRead(X, k, &bk));
            PetscCall(VecAXPY(xk, -1.0, bk));
            PetscCall(MatDenseRestoreColumnVecRead(X, k, &bk));
            PetscCall(VecNorm(xk, NORM_INFINITY, &e));
            diff = e > diff ? e : diff;
        }
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ksp_ex2: matsolve difference %.3e\n", (double)diff));
        PetscCall(VecDestroy(&xk));
        PetscCall(MatDestroy(&B));
        PetscCall(MatDestroy(&X));
    }
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFinalize());
    return 0;
}
